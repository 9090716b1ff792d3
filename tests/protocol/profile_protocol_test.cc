// The profile request and reply of the worker protocol: round trips and malformed input.
#include <gtest/gtest.h>

#include "forgek/protocol/worker_protocol.h"

namespace forgek {
namespace {

using nlohmann::json;

ProfileCommand SampleCommand() {
  ProfileCommand c;
  c.config.op = "top_p";
  c.config.name = "small";
  c.config.values = {{"B", 128}, {"V", 1024}};
  WireTensor out;
  out.name = "samples";
  out.role = TensorRole::output;
  out.dtype = DType::i32;
  out.shape = {128};
  c.config.tensors = {out};
  c.config.tolerance.exact = true;
  c.config.tolerance.max_mismatch_fraction = 0.02;
  c.kernel.label = "reference";
  c.kernel.library = "cublas.gemm_bf16";
  c.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum"};
  c.seed = 0xdeadbeefcafeULL;
  c.warmup = 2;
  c.samples = 7;
  return c;
}

TEST(ProfileProtocol, CommandRoundTripKeepsEveryField) {
  ProfileCommand c = SampleCommand();
  ProfileCommand back;
  std::string err;
  ASSERT_TRUE(FromJson(json::parse(ToJson(c).dump()), &back, &err)) << err;
  EXPECT_EQ(back.config.name, "small");
  EXPECT_EQ(back.kernel.library, "cublas.gemm_bf16");
  EXPECT_EQ(back.metrics, c.metrics);
  EXPECT_EQ(back.seed, c.seed);
  EXPECT_EQ(back.warmup, 2);
  EXPECT_EQ(back.samples, 7);
  EXPECT_DOUBLE_EQ(back.config.tolerance.max_mismatch_fraction, 0.02);
  EXPECT_TRUE(back.config.tolerance.exact);
}

TEST(ProfileProtocol, MismatchFractionTravelsInEveryWireConfig) {
  WireConfig c = SampleCommand().config;
  json j = ToJson(c);
  EXPECT_DOUBLE_EQ(j["tolerance"]["max_mismatch_fraction"].get<double>(), 0.02);
  j["tolerance"].erase("max_mismatch_fraction");  // an older supervisor: the default, 0
  WireConfig back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_EQ(back.tolerance.max_mismatch_fraction, 0);
}

TEST(ProfileProtocol, ReplyRoundTripKeepsRecordsMetricsAndErrors) {
  ProfileReply r;
  KernelLaunchRecord k;
  k.name = "nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_NNT";
  k.grid[0] = 132;
  k.block[0] = 384;
  k.cluster[0] = 2, k.cluster[1] = 1, k.cluster[2] = 1;
  k.registers_per_thread = 168;
  k.static_smem_bytes = 0;
  k.dynamic_smem_bytes = 213000;
  k.local_memory_per_thread = 8;
  k.duration_us = 23.5;
  r.launches = {k};
  r.metrics = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 74.2}};
  r.kernel_metrics = {r.metrics};
  r.metrics_error = "metrics: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  r.time_us = 24.1;
  r.timing.median_us = 24.1;
  r.timing.samples = 20;

  ProfileReply back;
  std::string err;
  ASSERT_TRUE(FromJson(json::parse(ToJson(r).dump()), &back, &err)) << err;
  ASSERT_EQ(back.launches.size(), 1u);
  const KernelLaunchRecord& b = back.launches[0];
  EXPECT_EQ(b.name, k.name);
  EXPECT_EQ(b.grid[0], 132);
  EXPECT_EQ(b.grid[1], 1);
  EXPECT_EQ(b.block[0], 384);
  EXPECT_EQ(b.cluster[0], 2);
  EXPECT_EQ(b.registers_per_thread, 168);
  EXPECT_EQ(b.dynamic_smem_bytes, 213000);
  EXPECT_EQ(b.local_memory_per_thread, 8);
  EXPECT_DOUBLE_EQ(b.duration_us, 23.5);
  EXPECT_DOUBLE_EQ(back.metrics.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 74.2);
  ASSERT_EQ(back.kernel_metrics.size(), 1u);
  EXPECT_EQ(back.metrics_error, r.metrics_error);
  EXPECT_DOUBLE_EQ(back.time_us, 24.1);
  EXPECT_EQ(back.timing.samples, 20);
  EXPECT_EQ(back.status, ReplyStatus::ok);
}

TEST(ProfileProtocol, MalformedMessagesNameTheField) {
  std::string err;
  ProfileCommand c;
  json j = ToJson(SampleCommand());
  j["samples"] = 0;
  EXPECT_FALSE(FromJson(j, &c, &err));
  EXPECT_NE(err.find("samples"), std::string::npos) << err;
  j = ToJson(SampleCommand());
  j.erase("kernel");
  EXPECT_FALSE(FromJson(j, &c, &err));
  EXPECT_NE(err.find("kernel"), std::string::npos) << err;

  ProfileReply r;
  json reply = ToJson(ProfileReply{});
  reply["launches"] = json::array({{{"name", "k"}, {"grid", {1, 2}}, {"block", {32, 1, 1}}}});
  EXPECT_FALSE(FromJson(reply, &r, &err));
  EXPECT_EQ(err, "launches[0].grid: expected three integers (x, y, z)");
  reply["launches"] = json::array({{{"grid", {1, 1, 1}}, {"block", {32, 1, 1}}}});
  EXPECT_FALSE(FromJson(reply, &r, &err));
  EXPECT_NE(err.find("name"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
