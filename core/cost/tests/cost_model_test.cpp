#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

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
  for (auto k : {cost::Kernel::partition, cost::Kernel::select, cost::Kernel::merge, cost::Kernel::copy,
                 cost::Kernel::shuffle, cost::Kernel::message, cost::Kernel::immediate_message,
                 cost::Kernel::collective_message, cost::Kernel::communicator, cost::Kernel::collective,
                 cost::Kernel::reduce, cost::Kernel::continuation}) {
    EXPECT_DOUBLE_EQ(cost::modelled_seconds(k, 500, "0,3e-9"), 1.5e-6);
  }
}

TEST(CostModel, SegmentsJoinMeasuredPoints) {
  // sort measured at 16 (1e-7 s) and 256 (3e-6 s): the segment from 16 runs through both.
  const double slope = (3e-6 - 1e-7) / (256 * 8 - 16 * 4);
  char spec[96];
  std::snprintf(spec, sizeof spec, "0:0,1e-9;16:1e-7,%.17g", slope);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::sort, 8, spec), 1e-9 * 24);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::sort, 16, spec), 1e-7);
  EXPECT_NEAR(cost::modelled_seconds(cost::Kernel::sort, 256, spec), 3e-6, 1e-15);
  EXPECT_NEAR(cost::modelled_seconds(cost::Kernel::sort, 4096, spec),
              1e-7 + slope * (4096 * 12 - 64), 1e-15);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::copy, 10, "0:1,0;10:2,1;20:5,0"), 2.0);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::copy, 19, "0:1,0;10:2,1;20:5,0"), 11.0);
  EXPECT_DOUBLE_EQ(cost::modelled_seconds(cost::Kernel::copy, 25, "0:1,0;10:2,1;20:5,0"), 5.0);
}

TEST(CostModel, MalformedSpecsThrow) {
  for (const char* bad : {"x", "1e-6", "1e-6,", ",1", "1,2,3", "-1,2", "1,nan", "1,2 ", "1,2;",
                          "5:1,2", "0:1,2;0:1,2", "0:1,2;8:1,2;4:1,2", "0:1,2:3", "0:1,2;x"}) {
    EXPECT_THROW(cost::modelled_seconds(cost::Kernel::merge, 10, bad), std::invalid_argument)
        << bad;
  }
}

TEST(CostModel, EnvironmentNamesAreDistinct) {
  EXPECT_STREQ(cost::env_name(cost::Kernel::sort), "JANUS_COST_SORT");
  EXPECT_STREQ(cost::env_name(cost::Kernel::immediate_message), "JANUS_COST_IMMEDIATE_MESSAGE");
  EXPECT_STREQ(cost::env_name(cost::Kernel::collective_message), "JANUS_COST_COLLECTIVE_MESSAGE");
  std::set<std::string> names;
  const cost::Kernel all[] = {cost::Kernel::sort,         cost::Kernel::partition,         cost::Kernel::select,
                              cost::Kernel::merge,        cost::Kernel::copy,              cost::Kernel::shuffle,
                              cost::Kernel::message,      cost::Kernel::immediate_message, cost::Kernel::collective_message,
                              cost::Kernel::communicator, cost::Kernel::collective,        cost::Kernel::reduce,
                              cost::Kernel::continuation};
  for (cost::Kernel k : all) names.insert(cost::env_name(k));
  EXPECT_EQ(names.size(), sizeof all / sizeof all[0]);
}

TEST(CostModel, ChargeIsANoOpUnderRealMpi) {
  EXPECT_NO_THROW(cost::charge(cost::Kernel::sort, 100));
}

}  // namespace
