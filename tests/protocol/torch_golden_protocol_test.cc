// A golden given as a PyTorch problem on the worker protocol: the kernel's torch_file and the
// reply's golden_timing round-trip, and stay off the wire when unset (older peers see nothing new).
#include "forgek/protocol/worker_protocol.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

using nlohmann::json;

TEST(TorchGoldenProtocol, KernelTorchFileRoundTripsWithoutALaunch) {
  WireKernel k;
  k.label = "golden";
  k.torch_file = "/ops/relu/golden.py";
  EXPECT_FALSE(k.empty());
  json j = json::parse(ToJson(k).dump());
  EXPECT_EQ(j.dump(), R"({"label":"golden","torch_file":"/ops/relu/golden.py"})");
  WireKernel back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_EQ(back.torch_file, "/ops/relu/golden.py");
  EXPECT_TRUE(back.cubin_b64.empty());
  EXPECT_FALSE(ToJson(WireKernel{}).contains("torch_file"));
}

TEST(TorchGoldenProtocol, ReplyGoldenTimingRoundTrips) {
  EvaluateReply r;
  EXPECT_FALSE(ToJson(r).contains("golden_timing"));
  r.golden.seeds = 3;
  r.golden.total_ms = 120.5;
  r.golden.copy_ms = 2.25;
  r.golden.compute_ms = 100;
  r.golden.device = "cuda";
  r.golden.transport = "cuda_ipc";
  json j = json::parse(ToJson(r).dump());
  ASSERT_TRUE(j.contains("golden_timing"));
  EvaluateReply back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_EQ(back.golden.seeds, 3);
  EXPECT_DOUBLE_EQ(back.golden.total_ms, 120.5);
  EXPECT_DOUBLE_EQ(back.golden.copy_ms, 2.25);
  EXPECT_DOUBLE_EQ(back.golden.compute_ms, 100);
  EXPECT_EQ(back.golden.device, "cuda");
  EXPECT_EQ(back.golden.transport, "cuda_ipc");
  json bad = j;
  bad["golden_timing"]["seeds"] = "three";
  EXPECT_FALSE(FromJson(bad, &back, &err));
  EXPECT_NE(err.find("golden_timing.seeds"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
