#pragma once

#include <cstdint>
#include <tuple>

// The exact identity of an RBC communicator, carried in every message's envelope. Two distinct
// communicators that may be live on one process at the same time never have equal keys:
//   handle      a number rank 0 of the MPI communicator draws for each from_mpi on it, never
//               twice, broadcast once in from_mpi: distinct for handles on one MPI communicator;
//   list        0 for ranges of the handle's ranks; for a communicator made by
//               comm_create_group from a rank list, the list's identity (creator and counter);
//   first/last/stride  the members, in ranks of the base numbering (absolute, not relative);
//   tag         for comm_create_group over a range, its tag + 1 (MPI's rule there: concurrent
//               creations over one group use distinct tags, in any order), else 0;
//   generation  how many communicators over exactly this member set this process created
//               before on this handle. Only members create a communicator and they create
//               communicators over one member set in the same order (MPI's rule), so every
//               member counts the same value without communication.
namespace rbc::detail {

struct CommKey {
  std::uint64_t handle = 0;
  std::uint64_t list = 0;
  std::int32_t first = 0;
  std::int32_t last = 0;
  std::int32_t stride = 1;
  std::uint32_t tag = 0;  // comm_create_group over a range: its tag + 1
  std::uint64_t generation = 0;

  // The member set without the generation: what the generation counts creations of.
  auto group() const { return std::make_tuple(list, first, last, stride, tag); }

  friend bool operator==(const CommKey& a, const CommKey& b) {
    return a.handle == b.handle && a.list == b.list && a.first == b.first && a.last == b.last &&
           a.stride == b.stride && a.tag == b.tag && a.generation == b.generation;
  }
  friend bool operator!=(const CommKey& a, const CommKey& b) { return !(a == b); }
};

inline std::uint64_t mix64(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

// A 64-bit digest of the key: what id() shows users and what picks the tag context. Equal
// digests do not make communicators interfere (the key decides); they only cost a detour.
inline std::uint64_t digest(const CommKey& k) {
  std::uint64_t h = 0x243f6a8885a308d3ull;
  for (std::uint64_t v : {k.handle, k.list, static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.first)),
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.last)),
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.stride)), std::uint64_t{k.tag},
                          k.generation}) {
    h = mix64(h, v);
  }
  return h;
}

}  // namespace rbc::detail
