#include "inputs/inputs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "inputs/rng.hpp"

namespace {

using inputs::Distribution;
using inputs::Params;
constexpr std::uint64_t M = inputs::key_space;

Params params(int rank, int p, std::uint64_t n_per_pe, std::uint64_t seed = 42) {
  Params result;
  result.seed = seed;
  result.rank = rank;
  result.p = p;
  result.n_per_pe = n_per_pe;
  return result;
}

// All ranks' inputs concatenated in rank order.
template <class T>
std::vector<T> concatenated(Distribution d, int p, std::uint64_t n_per_pe, std::uint64_t seed = 42) {
  std::vector<T> all;
  for (int r = 0; r < p; ++r) {
    const auto local = inputs::generate<T>(d, params(r, p, n_per_pe, seed));
    all.insert(all.end(), local.begin(), local.end());
  }
  return all;
}

TEST(Rng, SameSeedSameStreamRepeats) {
  inputs::Rng a(7, 3), b(7, 3);
  for (int k = 0; k < 100; ++k) EXPECT_EQ(a.next(), b.next());
}

TEST(Rng, StreamsAndSeedsDiffer) {
  inputs::Rng a(7, 3), b(7, 4), c(8, 3), d(3, 7);
  const auto x = a.next();
  EXPECT_NE(x, b.next());
  EXPECT_NE(x, c.next());
  EXPECT_NE(x, d.next());
}

TEST(Rng, BoundsAreRespected) {
  inputs::Rng rng(1, 1);
  std::set<std::uint64_t> seen;
  for (int k = 0; k < 1000; ++k) {
    const auto v = rng.below(10);
    ASSERT_LT(v, 10u);
    seen.insert(v);
    const auto w = rng.between(5, 7);
    ASSERT_GE(w, 5u);
    ASSERT_LE(w, 7u);
    const double u = rng.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  EXPECT_EQ(seen.size(), 10u);  // 1000 draws hit every one of 10 values
  EXPECT_EQ(rng.between(9, 9), 9u);
  EXPECT_THROW(rng.below(0), std::invalid_argument);
  EXPECT_THROW(rng.between(3, 2), std::invalid_argument);
}

TEST(Rng, NormalHasUnitMoments) {
  inputs::Rng rng(5, 0);
  const int count = 200000;
  double sum = 0, squares = 0;
  for (int k = 0; k < count; ++k) {
    const double z = rng.normal();
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    squares += z * z;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.02);
  EXPECT_NEAR(squares / count, 1.0, 0.02);
}

TEST(Names, RoundTripAndAliases) {
  for (auto d : inputs::all_distributions()) {
    EXPECT_EQ(inputs::parse_distribution(inputs::name(d)), d) << inputs::name(d);
  }
  EXPECT_EQ(inputs::all_distributions().size(), 16u);
  EXPECT_EQ(inputs::thesis_distributions().size(), 11u);
  EXPECT_EQ(inputs::parse_distribution("AllToOne"), Distribution::kAllToOne);
  EXPECT_EQ(inputs::parse_distribution("BUCKET_SORTED"), Distribution::kBucketSorted);
  EXPECT_EQ(inputs::parse_distribution("g-Group"), Distribution::kGGroup);
  EXPECT_EQ(inputs::parse_distribution("MirroredTarget"), Distribution::kMirroredTarget);
}

TEST(Names, UnknownNamesAreRejectedWithTheName) {
  for (const std::string bad : {"", "uniformly", "zeros", "all-to-two", "sorted!"}) {
    try {
      inputs::parse_distribution(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("all-to-one"), std::string::npos) << e.what();
    }
  }
}

TEST(Params, InvalidOnesAreRejected) {
  EXPECT_THROW(inputs::generate<int>(Distribution::kUniform, params(0, 0, 10)),
               std::invalid_argument);
  EXPECT_THROW(inputs::generate<int>(Distribution::kUniform, params(4, 4, 10)),
               std::invalid_argument);
  EXPECT_THROW(inputs::generate<int>(Distribution::kUniform, params(-1, 4, 10)),
               std::invalid_argument);
  EXPECT_THROW(inputs::generate<int>(Distribution::kUniform, params(0, 4, ~std::uint64_t{0} / 2)),
               std::invalid_argument);
  auto bad_group = params(0, 6, 10);
  bad_group.group_size = 4;
  EXPECT_THROW(inputs::generate<int>(Distribution::kGGroup, bad_group), std::invalid_argument);
  bad_group.group_size = 3;
  EXPECT_NO_THROW(inputs::generate<int>(Distribution::kGGroup, bad_group));
}

TEST(AllDistributions, DeterministicSizedInRangeAndTypeIndependent) {
  for (auto d : inputs::all_distributions()) {
    for (int p : {1, 2, 3, 8, 12}) {
      for (std::uint64_t n : {0u, 1u, 7u, 100u}) {
        std::uint64_t sum = 0;
        for (int r = 0; r < p; ++r) {
          const auto prm = params(r, p, n);
          const auto a = inputs::generate<std::int64_t>(d, prm);
          SCOPED_TRACE(inputs::name(d) + " p=" + std::to_string(p) + " n=" + std::to_string(n) +
                       " rank=" + std::to_string(r));
          EXPECT_EQ(a, inputs::generate<std::int64_t>(d, prm));
          EXPECT_EQ(a.size(), inputs::local_count(d, prm));
          sum += a.size();
          for (auto v : a) {
            ASSERT_GE(v, 0);
            ASSERT_LT(static_cast<std::uint64_t>(v), M);
          }
          // Integer types see the same keys; double sees them too unless it draws reals.
          const auto b = inputs::generate<std::uint64_t>(d, prm);
          const auto c = inputs::generate<std::int32_t>(d, prm);
          ASSERT_EQ(b.size(), a.size());
          ASSERT_EQ(c.size(), a.size());
          for (std::size_t k = 0; k < a.size(); ++k) {
            ASSERT_EQ(static_cast<std::int64_t>(b[k]), a[k]);
            ASSERT_EQ(static_cast<std::int64_t>(c[k]), a[k]);
          }
          const auto x = inputs::generate<double>(d, prm);
          ASSERT_EQ(x.size(), a.size());
          for (double v : x) {
            ASSERT_GE(v, 0.0);
            ASSERT_LT(v, static_cast<double>(M));
          }
        }
        EXPECT_EQ(sum, inputs::global_count(d, params(0, p, n)));
      }
    }
  }
}

TEST(AllDistributions, SeedChangesRandomOnes) {
  for (auto d : {Distribution::kUniform, Distribution::kGaussian, Distribution::kBucketSorted,
                 Distribution::kGGroup, Distribution::kStaggered,
                 Distribution::kRandomizedDuplicates, Distribution::kMirroredTarget,
                 Distribution::kAllToOne, Distribution::kFewDistinct, Distribution::kOnePE,
                 Distribution::kUneven, Distribution::kFirstHalf}) {
    EXPECT_NE(inputs::generate<std::uint64_t>(d, params(0, 4, 200, 1)),
              inputs::generate<std::uint64_t>(d, params(0, 4, 200, 2)))
        << inputs::name(d);
  }
}

TEST(Uniform, RanksDifferAndDoublesAreReal) {
  const auto a = inputs::generate<std::uint64_t>(Distribution::kUniform, params(0, 4, 100));
  const auto b = inputs::generate<std::uint64_t>(Distribution::kUniform, params(1, 4, 100));
  EXPECT_NE(a, b);
  const auto x = inputs::generate<double>(Distribution::kUniform, params(0, 4, 100));
  EXPECT_TRUE(std::any_of(x.begin(), x.end(), [](double v) { return v != std::floor(v); }));
}

TEST(Uniform, CoversTheKeySpace) {
  const auto a = inputs::generate<std::uint64_t>(Distribution::kUniform, params(0, 1, 100000));
  double sum = 0;
  for (auto v : a) sum += static_cast<double>(v);
  EXPECT_NEAR(sum / a.size() / M, 0.5, 0.01);
}

TEST(Gaussian, MeanAndDeviation) {
  const auto x = inputs::generate<double>(Distribution::kGaussian, params(3, 8, 100000));
  double sum = 0, squares = 0;
  for (double v : x) sum += v;
  const double mean = sum / x.size();
  for (double v : x) squares += (v - mean) * (v - mean);
  EXPECT_NEAR(mean / M, 0.5, 0.005);
  EXPECT_NEAR(std::sqrt(squares / x.size()) / M, 0.125, 0.005);
}

TEST(Zero, AllZero) {
  const auto a = concatenated<double>(Distribution::kZero, 5, 30);
  EXPECT_EQ(a.size(), 150u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](double v) { return v == 0.0; }));
}

TEST(Sorted, GloballySortedAndDistinct) {
  for (int p : {1, 3, 8}) {
    const auto a = concatenated<std::int32_t>(Distribution::kSorted, p, 50);
    EXPECT_EQ(a.size(), 50u * p);
    EXPECT_TRUE(std::adjacent_find(a.begin(), a.end(), std::greater_equal<>()) == a.end());
  }
}

TEST(ReverseSorted, GloballyReverseSortedAndDistinct) {
  for (int p : {1, 3, 8}) {
    const auto a = concatenated<std::int64_t>(Distribution::kReverseSorted, p, 50);
    EXPECT_EQ(a.size(), 50u * p);
    EXPECT_TRUE(std::adjacent_find(a.begin(), a.end(), std::less_equal<>()) == a.end());
  }
}

TEST(BucketSorted, BucketsInOrderAndInTheirSegments) {
  const int p = 4;
  const std::uint64_t w = M / p;
  const auto a = inputs::generate<std::uint64_t>(Distribution::kBucketSorted, params(2, p, 10));
  // Buckets of 3, 3, 2, 2 keys.
  const std::vector<std::uint64_t> segment = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
  ASSERT_EQ(a.size(), segment.size());
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k] / w, segment[k]) << k;
}

TEST(Staggered, EachPeOneSegmentAndSegmentsArePermutation) {
  for (int p : {1, 2, 5, 8}) {
    const std::uint64_t w = M / p;
    std::set<std::uint64_t> segments;
    for (int r = 0; r < p; ++r) {
      const auto a = inputs::generate<std::uint64_t>(Distribution::kStaggered, params(r, p, 20));
      const std::uint64_t s = a.front() / w;
      for (auto v : a) EXPECT_EQ(v / w, s);
      segments.insert(s);
      if (p % 2 == 0) {
        EXPECT_EQ(s, r < p / 2 ? 2u * r + 1 : 2u * r - p) << "thesis rule, p=" << p;
      }
    }
    EXPECT_EQ(segments.size(), static_cast<std::size_t>(p));
    EXPECT_EQ(*segments.rbegin(), static_cast<std::uint64_t>(p - 1));
  }
}

TEST(GGroup, BucketsTargetSegments) {
  const int p = 8;
  auto prm = params(5, p, 12);
  prm.group_size = 4;  // rank 5 is in group 1, buckets of 3 keys target segments 0, 1, 2, 3
  const std::uint64_t w = M / p;
  const auto a = inputs::generate<std::uint64_t>(Distribution::kGGroup, prm);
  ASSERT_EQ(a.size(), 12u);
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k] / w, (1 * 4 + p / 2 + k / 3) % p) << k;
  }
  // Default g for p = 8 is 2 (the largest divisor not above sqrt(8)).
  auto dflt = params(5, p, 12);
  const auto b = inputs::generate<std::uint64_t>(Distribution::kGGroup, dflt);
  for (std::size_t k = 0; k < b.size(); ++k) EXPECT_EQ(b[k] / w, (2 * 2 + p / 2 + k / 6) % p);
}

TEST(MirroredTarget, BitReversedSegments) {
  const int p = 8;
  const std::uint64_t w = M / p;
  const std::vector<std::uint64_t> mirror = {0, 4, 2, 6, 1, 5, 3, 7};
  for (int r = 0; r < p; ++r) {
    for (auto v : inputs::generate<std::uint64_t>(Distribution::kMirroredTarget, params(r, p, 9))) {
      EXPECT_EQ(v / w, mirror[r]);
    }
  }
  // p = 6 uses 8 segments; ranks map to distinct ones.
  std::set<std::uint64_t> segments;
  for (int r = 0; r < 6; ++r) {
    segments.insert(
        inputs::generate<std::uint64_t>(Distribution::kMirroredTarget, params(r, 6, 1))[0] /
        (M / 8));
  }
  EXPECT_EQ(segments.size(), 6u);
}

TEST(AllToOne, OneSmallKeyPerPeAtTheEnd) {
  const int p = 6;
  for (int r = 0; r < p; ++r) {
    const auto a = inputs::generate<std::uint64_t>(Distribution::kAllToOne, params(r, p, 10));
    ASSERT_EQ(a.size(), 10u);
    EXPECT_EQ(a.back(), static_cast<std::uint64_t>(p - r));
    for (std::size_t k = 0; k + 1 < a.size(); ++k) EXPECT_GE(a[k], static_cast<std::uint64_t>(p));
  }
  // Large keys of lower ranks are larger.
  const auto low = inputs::generate<std::uint64_t>(Distribution::kAllToOne, params(0, p, 10));
  const auto high = inputs::generate<std::uint64_t>(Distribution::kAllToOne, params(5, p, 10));
  EXPECT_GT(*std::min_element(low.begin(), low.end() - 1),
            *std::max_element(high.begin(), high.end() - 1));
  EXPECT_EQ(inputs::generate<std::uint64_t>(Distribution::kAllToOne, params(0, p, 1)),
            std::vector<std::uint64_t>{6});
}

TEST(DeterministicDuplicates, ThesisShape) {
  // p = 4, N = 8, n = 32: PEs 0 and 1 hold log2(32) = 5, PE 2 holds log2(16) = 4, the last PE
  // holds runs of 4, 2, 1, 1 keys with values log2(8), log2(4), log2(2), log2(1).
  const auto a = concatenated<std::int32_t>(Distribution::kDeterministicDuplicates, 4, 8);
  const std::vector<std::int32_t> expected = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                                              4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 1, 0};
  EXPECT_EQ(a, expected);
}

TEST(RandomizedDuplicates, FewValuesInRange) {
  auto prm = params(1, 4, 1000);
  prm.duplicate_range = 16;
  const auto a = inputs::generate<std::uint64_t>(Distribution::kRandomizedDuplicates, prm);
  ASSERT_EQ(a.size(), 1000u);
  std::set<std::uint64_t> values(a.begin(), a.end());
  EXPECT_LE(values.size(), 16u);
  EXPECT_GE(values.size(), 2u);
  EXPECT_LT(*values.rbegin(), 16u);
  // Runs: the number of value changes is below r.
  int changes = 0;
  for (std::size_t k = 1; k < a.size(); ++k) changes += a[k] != a[k - 1];
  EXPECT_LT(changes, 16);
}

TEST(FewDistinct, AtMostTheRequestedKeys) {
  const auto a = concatenated<std::int64_t>(Distribution::kFewDistinct, 4, 500);
  EXPECT_EQ(std::set<std::int64_t>(a.begin(), a.end()).size(), 5u);
  auto prm = params(0, 1, 500);
  prm.distinct_keys = 2;
  const auto b = inputs::generate<std::int64_t>(Distribution::kFewDistinct, prm);
  EXPECT_EQ(std::set<std::int64_t>(b.begin(), b.end()).size(), 2u);
}

TEST(OnePE, EverythingOnRankZero) {
  EXPECT_EQ(inputs::generate<double>(Distribution::kOnePE, params(0, 5, 7)).size(), 35u);
  for (int r = 1; r < 5; ++r) {
    EXPECT_TRUE(inputs::generate<double>(Distribution::kOnePE, params(r, 5, 7)).empty());
  }
}

TEST(Uneven, DocumentedCountsIncludingEmptyPes) {
  const std::vector<std::uint64_t> expected = {10, 0, 5, 25, 10, 0};
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(inputs::generate<std::int32_t>(Distribution::kUneven, params(r, 6, 10)).size(),
              expected[r]);
  }
  EXPECT_EQ(inputs::global_count(Distribution::kUneven, params(0, 6, 10)), 50u);
  EXPECT_EQ(inputs::global_count(Distribution::kUneven, params(0, 8, 10)), 80u);
}

TEST(FirstHalf, TwiceTheKeysOnTheFirstHalf) {
  for (int p : {1, 4, 5}) {
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(inputs::generate<double>(Distribution::kFirstHalf, params(r, p, 7)).size(),
                r < (p + 1) / 2 ? 14u : 0u)
          << "p " << p << " rank " << r;
    }
  }
  EXPECT_EQ(inputs::global_count(Distribution::kFirstHalf, params(0, 5, 7)), 42u);
  EXPECT_EQ(inputs::parse_distribution("first-half"), Distribution::kFirstHalf);
}

}  // namespace
