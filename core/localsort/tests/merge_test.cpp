#include "localsort/merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace {

// (key, origin) records: the key is compared, the origin tells which run and position an
// element came from, so std::merge's stable order can be compared field by field.
struct Record {
  std::int64_t key;
  std::int64_t origin;
  bool operator==(const Record& other) const {
    return key == other.key && origin == other.origin;
  }
};

bool key_less(const Record& x, const Record& y) { return x.key < y.key; }

std::vector<Record> sorted_run(std::size_t n, std::int64_t range, std::int64_t origin_base,
                               std::mt19937_64& rng) {
  std::vector<Record> run(n);
  for (auto& r : run) r.key = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range));
  std::sort(run.begin(), run.end(), key_less);
  for (std::size_t i = 0; i < n; ++i) run[i].origin = origin_base + static_cast<std::int64_t>(i);
  return run;
}

// Lengths around the two-ended loop's limits (runs of 0, 1, 2 and 3 elements), very unequal
// runs, and key ranges from all-equal (every comparison a tie) to nearly distinct.
TEST(LocalMerge, EqualsStdMergeStableOrder) {
  std::mt19937_64 rng(7);
  const std::size_t lengths[] = {0, 1, 2, 3, 4, 5, 17, 64, 1000};
  const std::int64_t ranges[] = {1, 3, 1000, 1000000000};
  for (std::size_t na : lengths) {
    for (std::size_t nb : lengths) {
      for (std::int64_t range : ranges) {
        const std::vector<Record> a = sorted_run(na, range, 0, rng);
        const std::vector<Record> b = sorted_run(nb, range, 1 << 20, rng);
        std::vector<Record> expected(na + nb), out(na + nb);
        std::merge(a.begin(), a.end(), b.begin(), b.end(), expected.begin(), key_less);
        localsort::merge(a.data(), na, b.data(), nb, out.data(), key_less);
        ASSERT_EQ(out, expected) << "na=" << na << " nb=" << nb << " range=" << range;
      }
    }
  }
}

TEST(LocalMerge, OneRunEntirelyBeforeTheOther) {
  std::vector<double> low(100), high(300), out(400);
  for (std::size_t i = 0; i < low.size(); ++i) low[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < high.size(); ++i) high[i] = 1000.0 + static_cast<double>(i);
  std::vector<double> expected = low;
  expected.insert(expected.end(), high.begin(), high.end());
  localsort::merge(high.data(), high.size(), low.data(), low.size(), out.data(),
                   std::less<double>());
  EXPECT_EQ(out, expected);
  localsort::merge(low.data(), low.size(), high.data(), high.size(), out.data(),
                   std::less<double>());
  EXPECT_EQ(out, expected);
}

// A comparator that is not a strict weak order, or runs that are not sorted, still give a
// permutation of the input (run under --config=asan for the bounds).
TEST(LocalMerge, LyingComparatorsLoseNothing) {
  std::mt19937_64 rng(11);
  std::mt19937_64 coin(3);
  const std::vector<std::function<bool(const Record&, const Record&)>> liars = {
      [](const Record& x, const Record& y) { return x.key <= y.key; },
      [](const Record&, const Record&) { return true; },
      [](const Record&, const Record&) { return false; },
      [&coin](const Record&, const Record&) { return (coin() & 1) != 0; },
  };
  const std::size_t lengths[] = {0, 1, 2, 3, 10, 257};
  for (const auto& liar : liars) {
    for (std::size_t na : lengths) {
      for (std::size_t nb : lengths) {
        std::vector<Record> a = sorted_run(na, 5, 0, rng);
        std::vector<Record> b = sorted_run(nb, 5, 1 << 20, rng);
        std::shuffle(b.begin(), b.end(), rng);  // unsorted input as well
        std::vector<Record> out(na + nb);
        localsort::merge(a.data(), na, b.data(), nb, out.data(), liar);
        std::vector<Record> input = a;
        input.insert(input.end(), b.begin(), b.end());
        const auto by_origin = [](const Record& x, const Record& y) { return x.origin < y.origin; };
        std::sort(input.begin(), input.end(), by_origin);
        std::sort(out.begin(), out.end(), by_origin);
        ASSERT_EQ(out, input) << "na=" << na << " nb=" << nb;
      }
    }
  }
}

}  // namespace
