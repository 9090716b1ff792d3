// Tests of the bottleneck verdict on recorded metric values (pure: no GPU needed).
#include "forgek/knowledge/bottleneck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace forgek {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr double kH200Bandwidth = 4.8e12;
constexpr double kH200Bf16 = 989e12;

// Shaped like a large cuBLAS bf16 GEMM on H200: tensor pipe busy, DRAM mostly idle.
BottleneckInputs LargeGemm() {
  BottleneckInputs in;
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 18.5},
                {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 71.0},
                {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 86.2},
                {"sm__warps_active.avg.pct_of_peak_sustained_active", 18.7},
                {"lts__t_sectors_lookup_hit.sum", 9.0e8},
                {"lts__t_sectors_lookup_miss.sum", 1.0e8}};
  in.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  in.bytes = 3.0 * 8192.0 * 8192.0 * 2.0;
  in.time_us = 1400;
  in.peak_flops = kH200Bf16;
  in.peak_bandwidth = kH200Bandwidth;
  in.blocks = 132;
  in.sm_count = 132;
  return in;
}

TEST(Bottleneck, BusyTensorPipeIsCompute) {
  const BottleneckVerdict v = JudgeBottleneck(LargeGemm());
  EXPECT_EQ(v.kind, Bottleneck::compute);
  EXPECT_DOUBLE_EQ(v.compute_pct, 86.2);
  EXPECT_NEAR(v.memory_pct, 18.5, 1e-9);
  EXPECT_NEAR(v.l2_hit_pct, 90.0, 1e-9);
  EXPECT_THAT(v.reasons, Contains(HasSubstr("tensor pipe active 86.2%")));
  EXPECT_THAT(v.reasons, Contains(HasSubstr("compute runs at 86.2% of peak")));
}

TEST(Bottleneck, SaturatedDramIsMemory) {
  BottleneckInputs in;
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 87.0},
                {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30.0},
                {"sm__warps_active.avg.pct_of_peak_sustained_active", 60.0}};
  const BottleneckVerdict v = JudgeBottleneck(in);
  EXPECT_EQ(v.kind, Bottleneck::memory);
  EXPECT_DOUBLE_EQ(v.memory_pct, 87.0);
  EXPECT_THAT(v.reasons, Contains(HasSubstr("DRAM throughput 87.0% of peak")));
}

TEST(Bottleneck, RooflineAloneDecidesWhenNoMetrics) {
  // 4096x32768 fp32 softmax: 1 GiB moved in 0.25 ms is 4.29 TB/s, 89% of 4.8 TB/s.
  BottleneckInputs in;
  in.bytes = 2.0 * 4096 * 32768 * 4;
  in.time_us = 250;
  in.peak_bandwidth = kH200Bandwidth;
  const BottleneckVerdict v = JudgeBottleneck(in);
  EXPECT_EQ(v.kind, Bottleneck::memory);
  EXPECT_NEAR(v.memory_pct, 100.0 * in.bytes / 250e-6 / kH200Bandwidth, 1e-9);
  EXPECT_EQ(v.compute_pct, -1);
  EXPECT_EQ(v.warps_active_pct, -1);
}

TEST(Bottleneck, SmallGridIsOccupancy) {
  BottleneckInputs in;
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 12.0},
                {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20.0},
                {"sm__warps_active.avg.pct_of_peak_sustained_active", 40.0}};
  in.blocks = 64;
  in.sm_count = 132;
  const BottleneckVerdict v = JudgeBottleneck(in);
  EXPECT_EQ(v.kind, Bottleneck::occupancy);
  EXPECT_THAT(v.reasons, Contains(HasSubstr("64 blocks for 132 SMs")));
}

TEST(Bottleneck, FewActiveWarpsIsOccupancy) {
  BottleneckInputs in;
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 20.0},
                {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 25.0},
                {"sm__warps_active.avg.pct_of_peak_sustained_active", 12.5}};
  const BottleneckVerdict v = JudgeBottleneck(in);
  EXPECT_EQ(v.kind, Bottleneck::occupancy);
  EXPECT_THAT(v.reasons, Contains(HasSubstr("only 12.5% of warp slots active")));
}

TEST(Bottleneck, NothingBusyWithResidentWarpsIsLatency) {
  BottleneckInputs in;
  in.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 9.0},
                {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 14.0},
                {"sm__warps_active.avg.pct_of_peak_sustained_active", 55.0}};
  in.blocks = 1024;
  in.sm_count = 132;
  const BottleneckVerdict v = JudgeBottleneck(in);
  EXPECT_EQ(v.kind, Bottleneck::latency);
  EXPECT_DOUBLE_EQ(v.memory_pct, 9.0);
  EXPECT_DOUBLE_EQ(v.compute_pct, 14.0);
  EXPECT_THAT(v.reasons, Contains(HasSubstr("with 55.0% of warp slots active")));
}

TEST(Bottleneck, EmptyInputIsLatencyWithUnknownNumbers) {
  const BottleneckVerdict v = JudgeBottleneck(BottleneckInputs{});
  EXPECT_EQ(v.kind, Bottleneck::latency);
  EXPECT_EQ(v.memory_pct, -1);
  EXPECT_EQ(v.compute_pct, -1);
  EXPECT_EQ(v.l2_hit_pct, -1);
}

TEST(Bottleneck, Names) {
  EXPECT_STREQ(BottleneckName(Bottleneck::memory), "memory");
  EXPECT_STREQ(BottleneckName(Bottleneck::compute), "compute");
  EXPECT_STREQ(BottleneckName(Bottleneck::latency), "latency");
  EXPECT_STREQ(BottleneckName(Bottleneck::occupancy), "occupancy");
}

}  // namespace
}  // namespace forgek
