// What sim/calibration/reduction_model charges SMPI's own reductions: the calling rank's operator
// applications in the algorithm SMPI's ompi selector runs.
#include "sim/calibration/reduction_model.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace {

using reduction_model::applications;
using reduction_model::Call;

// Applications summed as (count, bytes) would be charged at a cost linear in bytes.
double byte_volume(const std::vector<reduction_model::Term>& terms) {
  double volume = 0;
  for (const auto& t : terms) volume += t.count * static_cast<double>(t.bytes);
  return volume;
}

double count_of(const std::vector<reduction_model::Term>& terms, std::size_t bytes) {
  double count = 0;
  for (const auto& t : terms) {
    if (t.bytes == bytes) count += t.count;
  }
  return count;
}

TEST(ReductionModel, OtherSelectorsChargeNothing) {
  EXPECT_TRUE(applications("mpich", Call::reduce, 65536 / 8, 65536, 16, 0, 0, true).empty());
  EXPECT_TRUE(applications("", Call::scan, 8 / 8, 8, 16, 5, 0, true).empty());
  EXPECT_TRUE(applications("ompi", Call::allreduce, 8 / 8, 8, 1, 0, 0, true).empty());
}

TEST(ReductionModel, BinomialReduceOnSixteenRanksFromEightKiB) {
  // Open MPI's table: 16 to 31 ranks, 4 KiB and more, binomial tree.
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 0, 0, true), 65536), 4);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 8, 0, true), 65536), 3);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 2, 0, true), 65536), 1);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 1, 0, true), 65536), 0);
  // Relative to the root: the root is the one with every child.
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 5, 5, true), 65536), 4);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 16, 0, 5, true), 65536), 0);
}

TEST(ReductionModel, SmallReduceOnSixteenRanksIsABinaryTree) {
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 2048 / 8, 2048, 16, 0, 0, true), 2048), 2);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 2048 / 8, 2048, 16, 7, 0, true), 2048), 1);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 2048 / 8, 2048, 16, 8, 0, true), 2048), 0);
}

TEST(ReductionModel, TwoRankReduceIsLinear) {
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 2, 1, 1, true), 65536), 1);
  EXPECT_EQ(count_of(applications("ompi", Call::reduce, 65536 / 8, 65536, 2, 0, 1, true), 65536), 0);
}

TEST(ReductionModel, AllreduceDoublesSmallAndHalvesLarge) {
  // One element on 16 ranks: Open MPI's table says segmented ring, which doubles below a block
  // per rank.
  EXPECT_EQ(count_of(applications("ompi", Call::allreduce, 8 / 8, 8, 16, 3, 0, true), 8), 4);
  EXPECT_EQ(count_of(applications("ompi", Call::allreduce, 1024 / 8, 1024, 16, 3, 0, true), 1024), 4);
  // Rabenseifner on 16: halves of 32, 16, 8 and 4 KiB, one each; 15/16 of the vector in all.
  const auto halving = applications("ompi", Call::allreduce, 65536 / 8, 65536, 16, 3, 0, true);
  EXPECT_EQ(halving.size(), 4u);
  EXPECT_DOUBLE_EQ(byte_volume(halving), 65536.0 * 15 / 16);
  // On 12 ranks a fold of the whole vector first, then halving on 8.
  const auto folded = applications("ompi", Call::allreduce, 65536 / 8, 65536, 12, 3, 0, true);
  EXPECT_EQ(count_of(folded, 65536), 1);
  EXPECT_DOUBLE_EQ(byte_volume(folded), 65536.0 + 65536.0 * 7 / 8);
  // Two ranks, 64 KiB: a segmented ring, one block of half the vector.
  EXPECT_EQ(count_of(applications("ompi", Call::allreduce, 65536 / 8, 65536, 2, 0, 0, true), 32768), 1);
}

TEST(ReductionModel, NonCommutativeAllreduceReducesThenBroadcasts) {
  // 8 to 15 ranks from 1 MiB: reduce + bcast; the reduce an in-order binary tree to rank 0.
  EXPECT_EQ(count_of(applications("ompi", Call::allreduce, (1 << 21) / 8, 1 << 21, 12, 0, 0, false), 1 << 21), 2);
  EXPECT_EQ(count_of(applications("ompi", Call::allreduce, (1 << 21) / 8, 1 << 21, 12, 11, 0, false), 1 << 21), 0);
}

TEST(ReductionModel, ScansAreLinear) {
  for (int rank = 0; rank < 16; ++rank) {
    EXPECT_EQ(count_of(applications("ompi", Call::scan, 1024 / 8, 1024, 16, rank, 0, true), 1024), rank);
    EXPECT_EQ(count_of(applications("ompi", Call::exscan, 1024 / 8, 1024, 16, rank, 0, true), 1024), rank > 1 ? rank - 1 : 0);
  }
}

}  // namespace
