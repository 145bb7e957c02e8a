#include "localsort/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T, class Pred>
void expect_partitioned(std::vector<T> input, Pred pred) {
  std::vector<T> v = input;
  T* boundary = localsort::partition(v.data(), v.data() + v.size(), pred);
  const auto split = static_cast<std::size_t>(boundary - v.data());
  const auto expected = static_cast<std::size_t>(std::count_if(input.begin(), input.end(), pred));
  EXPECT_EQ(split, expected);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(pred(v[i]), i < split) << "at " << i;
  std::sort(v.begin(), v.end());
  std::sort(input.begin(), input.end());
  EXPECT_EQ(v, input);  // a permutation: nothing lost or duplicated
}

TEST(Partition, DoublesAtEverySize) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t n : {0, 1, 2, 3, 16, 257, 4096}) {
    std::vector<double> v(n);
    for (auto& x : v) x = u(rng);
    for (double cut : {-1.0, 0.25, 0.5, 2.0}) expect_partitioned(v, [cut](double x) { return x < cut; });
  }
}

TEST(Partition, DuplicatesAndSortedInputs) {
  std::vector<std::int64_t> ascending(1000), equal(1000, 5);
  for (std::size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<std::int64_t>(i % 7);
  expect_partitioned(ascending, [](std::int64_t x) { return x <= 3; });
  expect_partitioned(equal, [](std::int64_t x) { return x < 5; });
  expect_partitioned(equal, [](std::int64_t x) { return !(5 < x); });
}

TEST(Partition, LargeElementsTakeTheLibraryPath) {
  static_assert(!localsort::kSwapsWithoutBranches<std::string>);
  std::vector<std::string> words = {"pear", "fig", "apple", "kiwi", "plum", "date", "lime"};
  expect_partitioned(words, [](const std::string& w) { return w.size() <= 4; });
}

TEST(Partition, ThrowingPredicateLeavesAPermutation) {
  std::vector<int> input(100);
  for (int i = 0; i < 100; ++i) input[static_cast<std::size_t>(i)] = (i * 37) % 100;
  std::vector<int> v = input;
  int calls = 0;
  EXPECT_THROW(localsort::partition(v.data(), v.data() + v.size(),
                                    [&calls](int x) {
                                      if (++calls == 60) throw std::runtime_error("comparator");
                                      return x < 50;
                                    }),
               std::runtime_error);
  std::sort(v.begin(), v.end());
  std::sort(input.begin(), input.end());
  EXPECT_EQ(v, input);
}

}  // namespace
