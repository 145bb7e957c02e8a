#include <gtest/gtest.h>

#include <stdexcept>

#include "cost/charge.hpp"

namespace {

TEST(CostModel, UnsetSpecChargesNothing) {
  EXPECT_EQ(cost::modelled_seconds(cost::Kernel::sort, 1000, nullptr), 0.0);
  EXPECT_EQ(cost::modelled_seconds(cost::Kernel::copy, 1000, ""), 0.0);
}

TEST(CostModel, SortIsNLogN) {
  // 1e-6 + 2e-9 * 1024 * 10
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::sort, 1024, "1e-6,2e-9"),
                   1e-6 + 2e-9 * 10240);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::sort, 1, "1e-6,2e-9"), 1e-6);
}

TEST(CostModel, LinearKernels) {
  for (auto k : {cost::Kernel::partition, cost::Kernel::select, cost::Kernel::merge,
                 cost::Kernel::copy, cost::Kernel::message, cost::Kernel::communicator,
                 cost::Kernel::collective}) {
    EXPECT_DOUBLE_EQ(cost::modelled_seconds(k, 500, "0,3e-9"), 1.5e-6);
  }
}

TEST(CostModel, MalformedSpecsThrow) {
  for (const char* bad : {"x", "1e-6", "1e-6,", ",1", "1,2,3", "-1,2", "1,nan", "1,2 "}) {
    EXPECT_THROW(cost::modelled_seconds(cost::Kernel::merge, 10, bad), std::invalid_argument)
        << bad;
  }
}

TEST(CostModel, EnvironmentNamesAreDistinct) {
  EXPECT_STREQ(cost::env_name(cost::Kernel::sort), "JANUS_COST_SORT");
  EXPECT_STRNE(cost::env_name(cost::Kernel::merge), cost::env_name(cost::Kernel::copy));
}

TEST(CostModel, ChargeIsANoOpUnderRealMpi) {
  EXPECT_NO_THROW(cost::charge(cost::Kernel::sort, 100));
}

}  // namespace
