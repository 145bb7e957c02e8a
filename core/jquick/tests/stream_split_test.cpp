// StreamSplit decides where each level's data go: every owner must get exactly its share of the
// interval, the two streams must tile their positions without gaps, and a balanced split must
// keep the first half's data where they are.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "jquick/detail/layout.hpp"
#include "jquick/detail/stream_split.hpp"

namespace {

using jquick::detail::Layout;
using jquick::detail::StreamSplit;

RC_GTEST_PROP(StreamSplit, EveryOwnerGetsItsShareAndStreamsTile, ()) {
  const int p = *rc::gen::inRange(1, 300);
  const std::int64_t n = *rc::gen::inRange<std::int64_t>(1, 5000);
  const std::int64_t base = *rc::gen::inRange<std::int64_t>(-3, 4);
  const Layout layout(n, p, base);
  const std::int64_t begin = base + *rc::gen::inRange<std::int64_t>(0, n);
  const std::int64_t length = *rc::gen::inRange<std::int64_t>(1, base + n - begin + 1);
  const std::int64_t a_total = *rc::gen::inRange<std::int64_t>(0, length + 1);
  const StreamSplit split(layout, begin, length, a_total);

  RC_ASSERT(split.first() == layout.owner(begin));
  RC_ASSERT(split.last() == layout.owner(begin + length - 1));
  for (int stream = 0; stream < 2; ++stream) {
    RC_ASSERT(split.lo(stream, split.first()) == 0);
    RC_ASSERT(split.hi(stream, split.last()) == split.total(stream));
  }
  RC_ASSERT(split.total(0) + split.total(1) == length);
  for (int owner = split.first(); owner <= split.last(); ++owner) {
    const std::int64_t share = std::min(layout.end(owner), begin + length) -
                               std::max(layout.start(owner), begin);
    std::int64_t got = 0;
    for (int stream = 0; stream < 2; ++stream) {
      RC_ASSERT(split.lo(stream, owner) <= split.hi(stream, owner));
      if (owner < split.last()) RC_ASSERT(split.hi(stream, owner) == split.lo(stream, owner + 1));
      got += split.hi(stream, owner) - split.lo(stream, owner);
    }
    RC_ASSERT(got == share);
  }
  for (int stream = 0; stream < 2; ++stream) {
    if (split.total(stream) == 0) continue;
    const std::int64_t y = *rc::gen::inRange<std::int64_t>(0, split.total(stream));
    const int owner = split.owner_of(stream, y);
    RC_ASSERT(split.lo(stream, owner) <= y);
    RC_ASSERT(y < split.hi(stream, owner));
  }
}

// p PEs of c elements each, half of them small and spread evenly: stream 0's PE i (the first
// p/2) owns stream positions [i c/2, (i + 1) c/2), which must map onto PE i itself, and stream
// 1's PE p/2 + i onto the same PE i: one message per pair, as in hypercube quicksort.
TEST(StreamSplit, BalancedSplitKeepsTheFirstHalfLocal) {
  const int p = 16;
  const std::int64_t c = 4096;
  const Layout layout(p * c, p, 0);
  const StreamSplit small(layout, 0, p * c / 2, p * c / 4);
  ASSERT_EQ(small.last(), p / 2 - 1);
  for (int i = 0; i < p / 2; ++i) {
    for (int stream = 0; stream < 2; ++stream) {
      EXPECT_EQ(small.owner_of(stream, i * c / 2), i);
      EXPECT_EQ(small.owner_of(stream, (i + 1) * c / 2 - 1), i);
    }
  }
}

TEST(StreamSplit, EmptyStreamSendsEverythingFromTheOther) {
  const Layout layout(100, 7, 5);
  const StreamSplit split(layout, 20, 50, 0);
  EXPECT_EQ(split.total(0), 0);
  EXPECT_EQ(split.total(1), 50);
  for (int owner = split.first(); owner <= split.last(); ++owner) {
    EXPECT_EQ(split.lo(0, owner), 0);
    EXPECT_EQ(split.hi(0, owner), 0);
  }
}

}  // namespace
