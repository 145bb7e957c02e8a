#include "localsort/localsort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

// Input shapes: the kernels' fast paths and the classic quicksort killers.
enum class Shape { uniform, sorted, reverse, equal, few, organ, sawtooth, almost };
const Shape kShapes[] = {Shape::uniform, Shape::sorted,   Shape::reverse, Shape::equal,
                         Shape::few,     Shape::organ,    Shape::sawtooth, Shape::almost};

template <class T>
T random_value(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point<T>::value) {
    std::uniform_real_distribution<double> real(-1e6, 1e6);
    const std::uint64_t pick = rng() % 16;
    if (pick == 0) return T(0);
    if (pick == 1) return -T(0);
    if (pick == 2) return std::numeric_limits<T>::infinity();
    if (pick == 3) return -std::numeric_limits<T>::infinity();
    if (pick == 4) return std::numeric_limits<T>::denorm_min();
    return static_cast<T>(real(rng));
  } else {
    return static_cast<T>(rng());
  }
}

template <class T>
std::vector<T> make_input(Shape shape, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T>(rng);
  switch (shape) {
    case Shape::uniform: break;
    case Shape::sorted: std::sort(v.begin(), v.end()); break;
    case Shape::reverse: std::sort(v.begin(), v.end(), std::greater<T>()); break;
    case Shape::equal: std::fill(v.begin(), v.end(), n ? v[0] : T()); break;
    case Shape::few:
      for (auto& x : v) x = static_cast<T>(rng() % 4);
      break;
    case Shape::organ:
      std::sort(v.begin(), v.begin() + n / 2);
      std::sort(v.begin() + n / 2, v.end(), std::greater<T>());
      break;
    case Shape::sawtooth:
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i % 17);
      break;
    case Shape::almost:
      std::sort(v.begin(), v.end());
      for (std::size_t i = 0; i + 1 < n; i += 50) std::swap(v[i], v[(i * 7919) % n]);
      break;
  }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

std::vector<std::size_t> test_sizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 130; ++n) sizes.push_back(n);
  for (std::size_t n : {255, 256, 257, 511, 512, 513, 1000, 4096, 10007, 70000}) {
    sizes.push_back(n);
  }
  return sizes;
}

// The result must be ordered by `less` and a permutation of the input (bit for bit).
template <class T, class Less>
void check_against_std(Less less) {
  std::uint64_t seed = 1;
  for (std::size_t n : test_sizes()) {
    for (Shape shape : kShapes) {
      std::vector<T> input = make_input<T>(shape, n, seed++);
      std::vector<T> ours = input;
      localsort::sort(ours.begin(), ours.end(), less);
      std::vector<T> expected = input;
      std::stable_sort(expected.begin(), expected.end(), less);
      ASSERT_TRUE(std::is_sorted(ours.begin(), ours.end(), less))
          << "n=" << n << " shape=" << static_cast<int>(shape);
      // Equivalent elements may differ in bits only for +-0.0: compare values, then bits of
      // the multiset.
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_FALSE(less(ours[i], expected[i]) || less(expected[i], ours[i])) << "n=" << n;
      }
      auto bit_less = [](const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) < 0; };
      std::sort(ours.begin(), ours.end(), bit_less);
      std::sort(expected.begin(), expected.end(), bit_less);
      ASSERT_TRUE(same_bits(ours, expected)) << "lost or duplicated elements, n=" << n;
    }
  }
}

TEST(LocalSort, Int64Ascending) { check_against_std<std::int64_t>(std::less<std::int64_t>()); }
TEST(LocalSort, Int64Descending) { check_against_std<std::int64_t>(std::greater<>()); }
TEST(LocalSort, UInt64) { check_against_std<std::uint64_t>(std::less<>()); }
TEST(LocalSort, Int32) { check_against_std<std::int32_t>(std::less<std::int32_t>()); }
TEST(LocalSort, UInt16) { check_against_std<std::uint16_t>(std::less<std::uint16_t>()); }
TEST(LocalSort, Int8) { check_against_std<std::int8_t>(std::greater<std::int8_t>()); }
TEST(LocalSort, Double) { check_against_std<double>(std::less<double>()); }
TEST(LocalSort, DoubleDescending) { check_against_std<double>(std::greater<double>()); }
TEST(LocalSort, Float) { check_against_std<float>(std::less<float>()); }
TEST(LocalSort, DoubleUserComparator) {
  check_against_std<double>([](double a, double b) { return a < b; });
}
TEST(LocalSort, Int64ByAbsoluteValue) {
  // Many equivalent but different elements: the comparison path.
  check_against_std<std::int64_t>([](std::int64_t a, std::int64_t b) { return (a % 100) < (b % 100); });
}

TEST(LocalSort, Pairs) {
  using P = std::pair<std::int64_t, std::int64_t>;
  std::uint64_t seed = 7;
  for (std::size_t n : test_sizes()) {
    std::mt19937_64 rng(seed++);
    std::vector<P> v(n);
    for (auto& x : v) x = P(static_cast<std::int64_t>(rng() % 50), static_cast<std::int64_t>(rng()));
    std::vector<P> expected = v;
    std::sort(expected.begin(), expected.end());
    localsort::sort(v.begin(), v.end(), std::less<P>());
    ASSERT_EQ(v, expected);
  }
}

TEST(LocalSort, NanUnderStdLessGoesToTheEnds) {
  std::mt19937_64 rng(3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t n : {3, 100, 600, 5000}) {
    std::vector<double> v = make_input<double>(Shape::uniform, n, n);
    for (std::size_t i = 0; i < n; i += 3) v[i] = (i % 2) ? nan : -nan;
    std::vector<double> input = v;
    localsort::sort(v.data(), v.data() + n, std::less<double>());
    std::vector<double> numbers, expected_numbers;
    for (double x : input) {
      if (!std::isnan(x)) expected_numbers.push_back(x);
    }
    std::sort(expected_numbers.begin(), expected_numbers.end());
    // Radix path (n >= threshold): NaNs only at the two ends; numbers in order between.
    if (static_cast<std::ptrdiff_t>(n) >= localsort::kRadixThreshold) {
      std::size_t i = 0;
      while (i < n && std::isnan(v[i])) ++i;
      std::size_t j = n;
      while (j > i && std::isnan(v[j - 1])) --j;
      numbers.assign(v.begin() + i, v.begin() + j);
      ASSERT_EQ(numbers.size(), expected_numbers.size());
      for (std::size_t k = 0; k < numbers.size(); ++k) ASSERT_EQ(numbers[k], expected_numbers[k]);
    }
    // Always a permutation of the input.
    auto bit_less = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) < 0; };
    std::sort(v.begin(), v.end(), bit_less);
    std::sort(input.begin(), input.end(), bit_less);
    ASSERT_TRUE(same_bits(v, input));
  }
}

TEST(LocalSort, NanLastComparator) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto nan_last = [](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  };
  for (std::size_t n : {0, 1, 5, 100, 1000, 20000}) {
    std::vector<double> v = make_input<double>(Shape::uniform, n, n + 11);
    std::size_t nans = 0;
    for (std::size_t i = 0; i < n; i += 5, ++nans) v[i] = nan;
    localsort::sort(v.begin(), v.end(), nan_last);
    ASSERT_TRUE(std::is_sorted(v.begin(), v.end(), nan_last));
    for (std::size_t i = n - nans; i < n; ++i) ASSERT_TRUE(std::isnan(v[i]));
  }
}

// Comparators that are not strict weak orders: the sort must terminate and return a
// permutation of its input (no element lost, duplicated or read out of bounds; run the test
// under --config=asan to check the bounds).
TEST(LocalSort, LyingComparatorsLoseNothing) {
  std::mt19937_64 coin(5);
  const std::vector<std::function<bool(std::int64_t, std::int64_t)>> liars = {
      [](std::int64_t a, std::int64_t b) { return a <= b; },
      [](std::int64_t, std::int64_t) { return true; },
      [](std::int64_t a, std::int64_t b) { return a >= b; },
      [&coin](std::int64_t, std::int64_t) { return (coin() & 1) != 0; },
  };
  std::uint64_t seed = 100;
  for (const auto& liar : liars) {
    for (std::size_t n : test_sizes()) {
      for (Shape shape : kShapes) {
        std::vector<std::int64_t> v = make_input<std::int64_t>(shape, n, seed++);
        std::vector<std::int64_t> input = v;
        localsort::comparison_sort(v.begin(), v.end(), liar);
        std::sort(v.begin(), v.end());
        std::sort(input.begin(), input.end());
        ASSERT_EQ(v, input) << "n=" << n;
      }
    }
  }
}

TEST(LocalSort, RadixSortDirect) {
  std::vector<std::int64_t> v = {5, -3, 9, -3, 0, std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max()};
  std::vector<std::int64_t> expected = v;
  std::sort(expected.begin(), expected.end());
  localsort::radix_sort(v.data(), v.data() + v.size());
  EXPECT_EQ(v, expected);
  localsort::radix_sort(v.data(), v.data() + v.size(), true);
  std::reverse(expected.begin(), expected.end());
  EXPECT_EQ(v, expected);
}

TEST(LocalSort, Dispatch) {
  static_assert(localsort::radix_direction<double, std::less<double>>() == 1, "");
  static_assert(localsort::radix_direction<std::int64_t, std::greater<>>() == -1, "");
  static_assert(localsort::radix_direction<bool, std::less<bool>>() == 0, "");
  static_assert(localsort::radix_direction<long double, std::less<long double>>() == 0, "");
  static_assert(localsort::radix_direction<std::pair<int, int>, std::less<>>() == 0, "");
}

}  // namespace
