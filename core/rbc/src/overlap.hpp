#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "buffers.hpp"
#include "rbc/error.hpp"

// MPI forbids an operation's send and receive buffers to overlap (a collective's, and
// MPI_Sendrecv's; MPI_IN_PLACE is the way to work in place). RBC reads its input while results
// arrive, so overlapping buffers would give wrong results without a word (an allgather from and
// into one buffer did): refused instead, as MPICH refuses aliased buffers. A region is where
// `count` elements of `type` lie: a contiguous type's whole span; for a type with gaps only its
// first byte, so that only buffers that start at the same address are refused (spans of
// interleaved types may overlap legitimately).
namespace rbc::detail {

struct Region {
  const void* begin = nullptr;
  std::int64_t bytes = 0;
};

// A derived type's region; out of line, so the predefined case below inlines (it runs on every
// collective call: with a TypeInfo built twice per call, a one-double scan cost 170 instructions
// more).
__attribute__((noinline)) inline Region derived_region(const void* buf, std::int64_t count, MPI_Datatype type) {
  const TypeInfo info(type);
  return {buf, info.contiguous() ? count * info.size : 1};
}

inline Region region(const void* buf, std::int64_t count, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE || count <= 0) return {};
  if (const int named = predefined_size(type)) return {buf, count * named};
  return derived_region(buf, count, type);
}

// A gatherv's receive buffer: the elements from displs[r] to displs[r] + counts[r] of every rank
// that sends any.
inline Region region(const void* buf, const int* counts, const int* displs, int p, MPI_Datatype type) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for (int r = 0; r < p; ++r) {
    if (counts[r] <= 0) continue;
    lo = std::min<std::int64_t>(lo, displs[r]);
    hi = std::max<std::int64_t>(hi, static_cast<std::int64_t>(displs[r]) + counts[r]);
  }
  if (lo > hi) return {};
  const TypeInfo info(type);
  if (!info.contiguous()) return {buf, 1};
  return {static_cast<const char*>(buf) + lo * info.extent, (hi - lo) * info.extent};
}

[[noreturn]] __attribute__((noinline, cold)) inline void refuse_overlap(const char* call, const char* a,
                                                                        const char* b, bool in_place) {
  throw Error(std::string(call) + ": " + a + " and " + b + " overlap (MPI forbids it" +
                  (in_place ? "; pass MPI_IN_PLACE as sendbuf to work in place)" : ")"),
              MPI_ERR_BUFFER);
}

// `in_place`: whether the call takes MPI_IN_PLACE instead (the error says so).
inline void check_apart(const char* call, const char* a_name, Region a, const char* b_name, Region b,
                        bool in_place = true) {
  if (a.bytes == 0 || b.bytes == 0) return;
  const auto x = reinterpret_cast<std::uintptr_t>(a.begin);
  const auto y = reinterpret_cast<std::uintptr_t>(b.begin);
  if (x < y + static_cast<std::uintptr_t>(b.bytes) && y < x + static_cast<std::uintptr_t>(a.bytes)) {
    refuse_overlap(call, a_name, b_name, in_place);
  }
}

// Two buffers of `count` elements of `type` each (a reduction's): one region's size serves both.
inline void check_apart(const char* call, const char* a_name, const void* a, const char* b_name, const void* b,
                        std::int64_t count, MPI_Datatype type) {
  if (a == MPI_IN_PLACE || b == MPI_IN_PLACE) return;
  const std::int64_t bytes = region(a, count, type).bytes;
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  if ((x > y ? x - y : y - x) < static_cast<std::uintptr_t>(bytes)) refuse_overlap(call, a_name, b_name, true);
}

}  // namespace rbc::detail
