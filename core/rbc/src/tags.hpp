#pragma once

#include <cstdint>

#include "rbc/comm.hpp"
#include "rbc/range.hpp"

// Layout of the 31-bit MPI tag RBC sends with:
//
//   bit 30      0 = user point-to-point, 1 = collective-internal
//   bits 29..13 context of the communicator (17 bits)
//   bits 12..0  user: the user's tag (0..max_user_tag)
//               collective: sequence number (8 bits) and message phase (5 bits)
//
// The context keeps communicators that share ranks apart; the sequence number keeps
// concurrent collectives on one communicator apart, whatever order they progress in.
namespace rbc::detail {

inline constexpr int kUserTagBits = 13;
inline constexpr int kContextBits = 17;
inline constexpr std::uint32_t kContextMask = (1u << kContextBits) - 1;
inline constexpr int kCollectiveFlag = 1 << 30;
inline constexpr int kSequenceBits = 8;
inline constexpr int kPhaseBits = 5;
inline constexpr int kMaxOutstandingCollectives = 1 << kSequenceBits;
inline constexpr int kRequiredTagUb = 0x7fffffff;

static_assert(max_user_tag == (1 << kUserTagBits) - 1, "user tag bits and max_user_tag disagree");
static_assert(kSequenceBits + kPhaseBits == kUserTagBits, "collective fields must fill the low bits");

// RBC_TEST_DROP_CONTEXT builds a deliberately broken RBC whose tags do not carry the context,
// so that tests can prove the interference checks catch the mistake.
inline std::uint32_t tag_context(std::uint32_t context) {
#ifdef RBC_TEST_DROP_CONTEXT
  (void)context;
  return 0;
#else
  return context & kContextMask;
#endif
}

inline int user_mpi_tag(std::uint32_t context, int tag) {
  return static_cast<int>((tag_context(context) << kUserTagBits) | static_cast<std::uint32_t>(tag));
}

inline int collective_mpi_tag(std::uint32_t context, std::uint32_t sequence, int phase) {
  const std::uint32_t low =
      ((sequence & ((1u << kSequenceBits) - 1)) << kPhaseBits) | static_cast<std::uint32_t>(phase);
  return kCollectiveFlag | static_cast<int>((tag_context(context) << kUserTagBits) | low);
}

inline int user_tag_of(int mpi_tag) { return mpi_tag & max_user_tag; }

// Identity of a sub-communicator: a mix of the parent's identity and the member set (in ranks of
// the MPI communicator), so every member computes the same value locally. Its low 17 bits are
// the context in the tag: distinct communicators share a context with probability 2^-17, which
// the checked build's envelope (full 64 bits) detects.
inline std::uint64_t child_id(std::uint64_t parent, const Range& members) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ parent;
  for (std::uint64_t v : {static_cast<std::uint64_t>(members.first()),
                          static_cast<std::uint64_t>(members.stride()),
                          static_cast<std::uint64_t>(members.size())}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return h;
}

}  // namespace rbc::detail
