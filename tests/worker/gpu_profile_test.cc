// Profiling through the worker on the GPU: cuBLAS's gemm, its activity record and its metrics.
#include <gtest/gtest.h>

#include "gpu_worker_util.h"

namespace forgek::testing {
namespace {

// The cuBLAS bf16 GEMM of the smallest square config: an nvjet warp-specialised kernel (block
// 384 = 3 warpgroups) launched with a cluster, as docs/profiling.md records it. (The M=64
// config may get a different kernel, so the test does not rely on it.)
TEST(GpuProfile, ReferenceGemmShowsTheNvjetKernelAndItsMetrics) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  OperatorSpec op = LoadOp(OperatorsRoot() + "/gemm_bf16");
  ASSERT_EQ(op.reference.library, "cublas.gemm_bf16");
  ASSERT_NE(op.FindConfig("4096^3"), nullptr);
  WorkerEvaluatorOptions opts;
  opts.command = WorkerCommand();
  WorkerEvaluator ev(opts);

  ProfileRequest req;
  req.op = &op;
  req.kernel = {"reference", op.reference.library, "", {}, {}};
  req.configs = {"4096^3"};
  std::vector<KernelProfile> profiles;
  std::string err;
  ASSERT_TRUE(ev.Profile(req, &profiles, &err)) << err;
  ASSERT_EQ(profiles.size(), 1u);
  const KernelProfile& p = profiles[0];
  EXPECT_EQ(p.label, "reference");
  EXPECT_EQ(p.config, "4096^3");
  EXPECT_GT(p.time_us, 10);
  EXPECT_DOUBLE_EQ(p.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_GT(p.bytes, 0);
  EXPECT_TRUE(p.sass.empty()) << "a library call has no cubin of ours to disassemble";

  bool found = false;
  for (const KernelLaunchRecord& l : p.launches) {
    if (l.name.find("nvjet") == std::string::npos || l.name.find("sm90") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(l.block[0] * l.block[1] * l.block[2], 384) << l.name;
    EXPECT_GT(l.cluster[0], 0) << l.name;
    EXPECT_GT(l.registers_per_thread, 0) << l.name;
    EXPECT_GT(l.dynamic_smem_bytes, 0) << l.name;
  }
  EXPECT_TRUE(found) << "no nvjet sm90 kernel among " << p.launches.size() << " launch records";

  bool sm_throughput = false;
  for (const auto& [name, value] : p.metrics) {
    if (name.rfind("sm__throughput", 0) != 0) continue;
    sm_throughput = true;
    EXPECT_GT(value, 0) << name;
    EXPECT_LE(value, 100.5) << name;
  }
  EXPECT_TRUE(sm_throughput) << "metrics: " << p.metrics.size();
}

TEST(GpuProfile, UnknownMetricFailsOnlyTheMetrics) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  OperatorSpec op = LoadOp(OperatorsRoot() + "/gemm_bf16");
  WorkerEvaluatorOptions opts;
  opts.command = WorkerCommand();
  WorkerEvaluator ev(opts);
  ProfileRequest req;
  req.op = &op;
  req.kernel = {"reference", op.reference.library, "", {}, {}};
  req.configs = {"4096^3"};
  req.metrics = {"no__such_metric.sum"};
  std::vector<KernelProfile> profiles;
  std::string err;
  ASSERT_TRUE(ev.Profile(req, &profiles, &err)) << err;
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_TRUE(profiles[0].metrics.empty());
  EXPECT_FALSE(profiles[0].launches.empty());
  EXPECT_GT(profiles[0].time_us, 0);
}

}  // namespace
}  // namespace forgek::testing
