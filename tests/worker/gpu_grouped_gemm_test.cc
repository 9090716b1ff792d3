// The cuBLAS grouped GEMM reference through the worker's evaluate path. It plans from the group
// sizes it reads back from the device, and every seed of an evaluation brings a fresh split of the
// rows: each seed, not only the first, must agree with the golden. A plan kept from the first seed
// fails the second with rel_l2 ~1.1 (rows between the old and new boundaries multiplied by the
// wrong expert), as the device runs of 2026-11-29 showed while the single-launch unit test passed.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::LoadOp;
using testing::OperatorsRoot;

TEST(GpuGroupedGemm, CublasReferenceAgreesWithTheGoldenOnEverySeed) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  CompilerOptions copts;
  copts.cache_dir = "";
  copts.pch_dir = "";
  Compiler compiler(copts);
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  opts.policy.stop.max_time_s = 0.3;
  WorkerEvaluator ev(opts);

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

}  // namespace
}  // namespace forgek
