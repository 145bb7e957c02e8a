#pragma once

#include <cstdint>

#include "jquick/detail/layout.hpp"

namespace jquick::detail {

// Where one level's small (or large) elements go. They fill the global indices
// [begin, begin + n) of the balanced layout, and they come from two streams: stream 0 holds the
// elements of the group's first PEs (a_total of them), stream 1 those of the others, each in PE
// order. Every owner's part of the interval takes both streams in proportion, a_total / n of it
// from stream 0. With the group's first half as stream 0, a PE there finds its own small
// elements mapped mostly onto itself and one in the second half its large elements, as in
// hypercube quicksort: each level moves about half a PE's data instead of nearly all of it,
// and the result is still exactly balanced. Positions are counted from 0 in each stream.
class StreamSplit {
 public:
  StreamSplit(const Layout& layout, std::int64_t begin, std::int64_t n, std::int64_t a_total)
      : layout_(layout), begin_(begin), n_(n), a_total_(a_total) {
    if (n > 0) {
      first_ = layout.owner(begin);
      last_ = layout.owner(begin + n - 1);
    }
  }

  int first() const { return first_; }
  int last() const { return last_; }
  std::int64_t total(int stream) const { return stream == 0 ? a_total_ : n_ - a_total_; }

  // The positions of `stream` that go to `owner` (first() <= owner <= last()): [lo, hi).
  std::int64_t lo(int stream, int owner) const { return at(stream, start(owner)); }
  std::int64_t hi(int stream, int owner) const { return at(stream, end(owner)); }

  // The owner receiving position y of `stream` (0 <= y < total(stream)).
  int owner_of(int stream, std::int64_t y) const {
    int low = first_, high = last_;
    while (low < high) {
      const int mid = low + (high - low + 1) / 2;
      if (lo(stream, mid) <= y) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }

 private:
  // Offsets into the interval where an owner's part starts and ends.
  std::int64_t start(int owner) const {
    const std::int64_t s = layout_.start(owner) - begin_;
    return s < 0 ? 0 : s;
  }
  std::int64_t end(int owner) const {
    const std::int64_t e = layout_.end(owner) - begin_;
    return e > n_ ? n_ : e;
  }
  // Stream positions before interval offset u: floor(u a_total / n) of stream 0, the rest of
  // stream 1. Both grow by at most one per index, so every owner's parts are contiguous.
  std::int64_t at(int stream, std::int64_t u) const {
    const std::int64_t a = n_ == 0 ? 0
                                   : static_cast<std::int64_t>(static_cast<unsigned __int128>(u) *
                                                               static_cast<std::uint64_t>(a_total_) /
                                                               static_cast<std::uint64_t>(n_));
    return stream == 0 ? a : u - a;
  }

  const Layout& layout_;
  std::int64_t begin_;
  std::int64_t n_;
  std::int64_t a_total_;
  int first_ = 0;
  int last_ = -1;
};

}  // namespace jquick::detail
