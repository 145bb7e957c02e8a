// The sequential co-rank search: exact co-ranks (by the definition: how many of A's elements
// are among the first k of the stable merge) for every position of exhaustively enumerated
// small inputs and of random larger ones, and the iteration bound (never exceeded, attained).
#include "merge/corank.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

struct Tagged {
  int key;
  int source;  // 0 = A, 1 = B
  int index;
};

// Reference: j = number of A's elements among the first k of the stable merge.
std::vector<std::uint64_t> reference_j(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<Tagged> ta, tb, c;
  for (int i = 0; i < static_cast<int>(a.size()); ++i) ta.push_back({a[i], 0, i});
  for (int i = 0; i < static_cast<int>(b.size()); ++i) tb.push_back({b[i], 1, i});
  c.resize(a.size() + b.size());
  std::merge(ta.begin(), ta.end(), tb.begin(), tb.end(), c.begin(),
             [](const Tagged& x, const Tagged& y) { return x.key < y.key; });
  std::vector<std::uint64_t> j(c.size() + 1, 0);
  for (std::size_t k = 0; k < c.size(); ++k) j[k + 1] = j[k] + (c[k].source == 0 ? 1 : 0);
  return j;
}

// Checks every position; returns the largest iteration count seen.
int check_all_positions(const std::vector<int>& a, const std::vector<int>& b) {
  const auto expected = reference_j(a, b);
  int worst = 0;
  for (std::uint64_t k = 0; k <= a.size() + b.size(); ++k) {
    int iterations = 0;
    const auto split = merge::corank(k, a.begin(), a.size(), b.begin(), b.size(), std::less<int>(),
                                     &iterations);
    EXPECT_EQ(split.first, expected[k]) << "k=" << k << " m=" << a.size() << " n=" << b.size();
    EXPECT_EQ(split.first + split.second, k);
    EXPECT_LE(iterations, merge::iteration_bound(a.size(), b.size()))
        << "k=" << k << " m=" << a.size() << " n=" << b.size();
    worst = std::max(worst, iterations);
  }
  return worst;
}

// All non-decreasing sequences of length `size` over {0, .., values - 1}.
void sorted_sequences(int size, int values, std::vector<int>& prefix,
                      std::vector<std::vector<int>>& out) {
  if (static_cast<int>(prefix.size()) == size) {
    out.push_back(prefix);
    return;
  }
  for (int v = prefix.empty() ? 0 : prefix.back(); v < values; ++v) {
    prefix.push_back(v);
    sorted_sequences(size, values, prefix, out);
    prefix.pop_back();
  }
}

TEST(IterationBound, Values) {
  EXPECT_EQ(merge::iteration_bound(0, 0), 1);
  EXPECT_EQ(merge::iteration_bound(0, 100), 1);
  EXPECT_EQ(merge::iteration_bound(1, 100), 2);
  EXPECT_EQ(merge::iteration_bound(2, 3), 3);
  EXPECT_EQ(merge::iteration_bound(3, 3), 3);
  EXPECT_EQ(merge::iteration_bound(4, 9), 4);
  EXPECT_EQ(merge::iteration_bound(1000, 7), 4);
  EXPECT_EQ(merge::iteration_bound(std::uint64_t{1} << 40, std::uint64_t{1} << 41), 42);
}

// Every pair of sorted sequences with up to 6 elements over 3 values (ties everywhere),
// every output position.
TEST(Corank, ExhaustiveWithTies) {
  for (int m = 0; m <= 6; ++m) {
    for (int n = 0; n <= 6; ++n) {
      std::vector<std::vector<int>> as, bs;
      std::vector<int> prefix;
      sorted_sequences(m, 3, prefix, as);
      sorted_sequences(n, 3, prefix, bs);
      for (const auto& a : as) {
        for (const auto& b : bs) check_all_positions(a, b);
      }
    }
  }
}

// Every interleaving of distinct keys for m, n <= 9 (plus all-equal keys), and the bound is
// attained: for each min(m, n) some input needs exactly iteration_bound iterations.
TEST(Corank, ExhaustiveInterleavingsAttainTheBound) {
  std::vector<int> worst_by_min(10, 0);
  for (int m = 0; m <= 9; ++m) {
    for (int n = 0; n <= 9; ++n) {
      const int total = m + n;
      for (std::uint32_t mask = 0; mask < (1u << total); ++mask) {
        if (__builtin_popcount(mask) != m) continue;
        std::vector<int> a, b;
        for (int i = 0; i < total; ++i) ((mask >> i) & 1u ? a : b).push_back(i);
        const int worst = check_all_positions(a, b);
        worst_by_min[std::min(m, n)] = std::max(worst_by_min[std::min(m, n)], worst);
      }
      check_all_positions(std::vector<int>(m, 7), std::vector<int>(n, 7));
    }
  }
  for (int smaller = 0; smaller <= 9; ++smaller) {
    EXPECT_EQ(worst_by_min[smaller], merge::iteration_bound(smaller, 9)) << "min=" << smaller;
  }
}

TEST(Corank, RandomLarger) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 300; ++trial) {
    const int m = static_cast<int>(rng() % 300), n = static_cast<int>(rng() % 300);
    const int range = 1 + static_cast<int>(rng() % (trial % 3 == 0 ? 4 : 1000));
    std::vector<int> a(m), b(n);
    for (int& x : a) x = static_cast<int>(rng() % range);
    for (int& x : b) x = static_cast<int>(rng() % range);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    check_all_positions(a, b);
  }
}

TEST(Corank, CustomComparatorDescending) {
  const std::vector<int> a = {9, 7, 7, 3}, b = {8, 7, 1};
  // Descending merge: 9 8 7a 7a 7b 3 1; position 4 -> A gave 3 (9, 7, 7), B gave 1 (8).
  const auto split = merge::corank(4, a.begin(), a.size(), b.begin(), b.size(), std::greater<int>());
  EXPECT_EQ(split.first, 3u);
  EXPECT_EQ(split.second, 1u);
}

TEST(Corank, PositionBeyondTheEndThrows) {
  const std::vector<int> a = {1, 2}, b = {3};
  EXPECT_THROW(merge::corank(4, a.begin(), a.size(), b.begin(), b.size()), std::invalid_argument);
  EXPECT_NO_THROW(merge::corank(3, a.begin(), a.size(), b.begin(), b.size()));
}

}  // namespace
