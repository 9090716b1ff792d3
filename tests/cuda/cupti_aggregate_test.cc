// Tests of combining per-kernel range-profiler metrics (pure: no GPU needed).
#include <gtest/gtest.h>

#include "forgek/cuda/cupti.h"

namespace forgek {
namespace {

TEST(AggregateKernelMetrics, AddsCountersAndWeighsPercentagesByDuration) {
  const std::vector<MetricValues> kernels = {
      {{"gpu__time_duration.sum", 30000}, {"dram__bytes_read.sum", 1e6}, {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 80}},
      {{"gpu__time_duration.sum", 10000}, {"dram__bytes_read.sum", 3e6}, {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20}},
  };
  const MetricValues all = AggregateKernelMetrics(kernels);
  EXPECT_DOUBLE_EQ(all.at("gpu__time_duration.sum"), 40000);
  EXPECT_DOUBLE_EQ(all.at("dram__bytes_read.sum"), 4e6);
  EXPECT_DOUBLE_EQ(all.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), (80.0 * 3 + 20.0) / 4);
}

TEST(AggregateKernelMetrics, PlainMeanWithoutDurations) {
  const std::vector<MetricValues> kernels = {
      {{"sm__warps_active.avg.pct_of_peak_sustained_active", 10}},
      {{"sm__warps_active.avg.pct_of_peak_sustained_active", 30}},
  };
  EXPECT_DOUBLE_EQ(AggregateKernelMetrics(kernels).at("sm__warps_active.avg.pct_of_peak_sustained_active"), 20);
}

TEST(AggregateKernelMetrics, MissingMetricCombinesOverTheKernelsThatHaveIt) {
  const std::vector<MetricValues> kernels = {
      {{"gpu__time_duration.sum", 1000}, {"lts__t_sectors_lookup_hit.sum", 5}},
      {{"gpu__time_duration.sum", 3000}, {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 50}},
  };
  const MetricValues all = AggregateKernelMetrics(kernels);
  EXPECT_DOUBLE_EQ(all.at("lts__t_sectors_lookup_hit.sum"), 5);
  EXPECT_DOUBLE_EQ(all.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 50);
}

TEST(AggregateKernelMetrics, OneKernelIsItselfAndNoneIsEmpty) {
  const MetricValues one = {{"gpu__time_duration.sum", 24032}, {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 73.6}};
  EXPECT_EQ(AggregateKernelMetrics({one}), one);
  EXPECT_TRUE(AggregateKernelMetrics({}).empty());
}

}  // namespace
}  // namespace forgek
