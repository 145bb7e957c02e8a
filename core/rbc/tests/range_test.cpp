#include "rbc/range.hpp"

#include <gtest/gtest.h>

#include "rbc/error.hpp"

namespace {

TEST(Range, ContiguousRankArithmetic) {
  const rbc::Range r(3, 7);
  EXPECT_EQ(r.size(), 5);
  EXPECT_EQ(r.first(), 3);
  EXPECT_EQ(r.last(), 7);
  EXPECT_EQ(r.at(0), 3);
  EXPECT_EQ(r.at(4), 7);
  EXPECT_EQ(r.rank_of(5), 2);
  EXPECT_EQ(r.rank_of(2), -1);
  EXPECT_EQ(r.rank_of(8), -1);
}

TEST(Range, StrideRoundsLastDownToAMember) {
  const rbc::Range r(0, 9, 4);
  EXPECT_EQ(r.size(), 3);
  EXPECT_EQ(r.last(), 8);
  EXPECT_EQ(r.rank_of(4), 1);
  EXPECT_EQ(r.rank_of(5), -1);
  EXPECT_FALSE(r.contains(9));
}

TEST(Range, NestedSubRangesComposeStrides) {
  const rbc::Range world(0, 99);
  const rbc::Range evens = world.sub(0, 99, 2);  // 0, 2, ..., 98
  EXPECT_EQ(evens.size(), 50);
  const rbc::Range inner = evens.sub(5, 20, 3);  // evens 5, 8, ..., 20 -> 10, 16, ..., 40
  EXPECT_EQ(inner.first(), 10);
  EXPECT_EQ(inner.stride(), 6);
  EXPECT_EQ(inner.size(), 6);
  EXPECT_EQ(inner.last(), 40);
  for (int i = 0; i < inner.size(); ++i) EXPECT_EQ(inner.rank_of(inner.at(i)), i);
}

TEST(Range, InvalidRangesAreRejectedWithAReason) {
  EXPECT_THROW(rbc::Range(5, 4), rbc::Error);
  EXPECT_THROW(rbc::Range(-1, 4), rbc::Error);
  EXPECT_THROW(rbc::Range(0, 4, 0), rbc::Error);
  try {
    rbc::Range(0, 4, -2);
    FAIL();
  } catch (const rbc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("stride"), std::string::npos);
  }
  const rbc::Range r(0, 7);
  EXPECT_THROW(r.sub(2, 8), rbc::Error);
  EXPECT_THROW(r.at(8), rbc::Error);
  EXPECT_THROW(r.at(-1), rbc::Error);
}

TEST(Range, ExhaustiveSmallNestings) {
  for (int p = 1; p <= 12; ++p) {
    const rbc::Range world(0, p - 1);
    for (int f = 0; f < p; ++f)
      for (int l = f; l < p; ++l)
        for (int s = 1; s <= p; ++s) {
          const rbc::Range sub = world.sub(f, l, s);
          int members = 0;
          for (int x = 0; x < p; ++x) {
            const bool expected = x >= f && x <= l && (x - f) % s == 0;
            EXPECT_EQ(sub.contains(x), expected);
            if (expected) {
              EXPECT_EQ(sub.rank_of(x), members);
              EXPECT_EQ(sub.at(members), x);
              ++members;
            }
          }
          EXPECT_EQ(sub.size(), members);
        }
  }
}

}  // namespace
