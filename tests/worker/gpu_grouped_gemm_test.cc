// The cuBLAS grouped GEMM reference through the worker's evaluate path. It plans from the group
// sizes it reads back from the device, and every seed of an evaluation brings a fresh split of the
// rows: each seed, not only the first, must agree with the golden. A plan kept from the first seed
// fails the second with rel_l2 ~1.1 (rows between the old and new boundaries multiplied by the
// wrong expert), as the device runs of 2026-11-29 showed while the single-launch unit test passed.
// The wgmma family's own tile walk over the experts is checked the same way: fresh splits on
// every seed, and shapes that put expert boundaries inside tiles, a single expert and many.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::LoadOp;
using testing::OperatorsRoot;

// A compiler without caches and a worker to evaluate on.
struct Bench {
  static WorkerEvaluatorOptions Worker() {
    WorkerEvaluatorOptions o;
    o.command = testing::WorkerCommand();
    o.policy.stop.max_time_s = 0.3;
    return o;
  }
  Compiler compiler{testing::NoCache()};
  WorkerEvaluator ev{Worker()};
};

TEST(GpuGroupedGemm, CublasReferenceAgreesWithTheGoldenOnEverySeed) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Bench bench;
  Compiler& compiler = bench.compiler;
  WorkerEvaluator& ev = bench.ev;

  // The failures were seen in workers that had evaluated other operators first (the all-operator
  // test and `ops bench`): two other cuBLAS references go first here, in the same worker.
  for (const char* other : {"batched_gemm_bf16", "gemv_bf16"}) {
    OperatorSpec op = LoadOp(OperatorsRoot() + "/" + other);
    ASSERT_EQ(op.name, other);
    EvalRequest req;
    req.op = &op;
    req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
    req.candidate = testing::Reference(compiler, op);
    req.seeds = 2;
    req.time = false;
    EvalResult r = ev.Evaluate(req);
    EXPECT_EQ(r.outcome, Outcome::correct) << other << ": " << OutcomeName(r.outcome) << ": " << r.detail;
  }

  OperatorSpec op = LoadOp(OperatorsRoot() + "/grouped_gemm_bf16");
  ASSERT_EQ(op.name, "grouped_gemm_bf16");
  // Beside the shipped config, a small one (still 8 uneven groups of at least 256 rows).
  op.configs.push_back({"E8_T4096_512x1024", {{"T", 4096}, {"E", 8}, {"K", 512}, {"N", 1024}}});
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  req.candidate = {"cublas", "cublas.grouped_gemm_bf16", "", {}, {}};
  req.seeds = 4;
  req.time = false;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << OutcomeName(r.outcome) << ": " << r.detail;
  EXPECT_EQ(r.configs.size(), op.configs.size());
  for (const ConfigResult& c : r.configs)
    std::printf("[ grouped  ] %s: 4 seeds, rel_l2 %.3g max_abs %.3g\n", c.config.c_str(), c.correctness.rel_l2,
                c.correctness.max_abs);

  // Timed: more instances (one per rotated input copy) plan at their warm-up, and one timed launch
  // is audited against the last seed's golden.
  req.seeds = 2;
  req.time = true;
  req.configs = {"E8_T4096_512x1024"};
  r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << OutcomeName(r.outcome) << ": " << r.detail;
}

// Each instance stores every expert's rows once: a cluster's padding tile, a tile crossing an
// expert's end (masked stores beside TMA stores), ping-pong, 64-row tiles and both rasters, on the
// shipped config and on shapes the suite lacks (one expert; 16 experts; one k-tile; T not a
// multiple of any tile), each seed a new split.
TEST(GpuGroupedGemm, WgmmaFamilyStoresEveryExpertsRowsOnEverySplit) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Bench bench;
  Compiler& compiler = bench.compiler;
  WorkerEvaluator& ev = bench.ev;

  OperatorSpec op = LoadOp(OperatorsRoot() + "/grouped_gemm_bf16");
  ASSERT_EQ(op.name, "grouped_gemm_bf16");
  op.configs.push_back({"E8_T4096_512x1024", {{"T", 4096}, {"E", 8}, {"K", 512}, {"N", 1024}}});
  op.configs.push_back({"E3_T2056_64x512", {{"T", 2056}, {"E", 3}, {"K", 64}, {"N", 512}}});
  op.configs.push_back({"E1_T2048_128x256", {{"T", 2048}, {"E", 1}, {"K", 128}, {"N", 256}}});
  op.configs.push_back({"E16_T8200_256x512", {{"T", 8200}, {"E", 16}, {"K", 256}, {"N", 512}}});
  const KernelUnderTest golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  for (const char* params_json :
       {R"({"BM":128,"BN":256,"STAGES":4,"CLUSTER_M":1,"GROUP_M":16,"SCHEDULE":0,"EPI":2})",
        R"({"BM":128,"BN":128,"STAGES":5,"CLUSTER_M":2,"GROUP_M":4,"SCHEDULE":0,"EPI":1})",
        R"({"BM":128,"BN":128,"STAGES":6,"CLUSTER_M":1,"GROUP_M":64,"SCHEDULE":1,"EPI":1})",
        R"({"BM":64,"BN":256,"STAGES":4,"CLUSTER_M":2,"GROUP_M":1,"SCHEDULE":0,"EPI":2})",
        R"({"BM":256,"BN":128,"STAGES":3,"CLUSTER_M":1,"GROUP_M":1,"SCHEDULE":0,"EPI":0})"})
    testing::ExpectInstanceCorrect(compiler, ev, op, golden, op.dir + "/families/wgmma_ws_grouped.cu", params_json, 3,
                                   "grouped");
}

}  // namespace
}  // namespace forgek
