// The attention primitives of the device library (the register-A wgmma of forgek/wgmma.cuh that the
// attention_prefill_bf16 families use for P·V) on a real GPU: a small test operator under
// tests/worker/device_library/wgmma_rs_pv/, whose kernel.cu uses the primitives and whose golden.cu
// computes the same result without the library, evaluated by the worker on every config and two
// fresh seeds, as any candidate is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::CompileSeed;
using testing::LoadOp;

// The test operator `name`'s kernel.cu agrees with its golden.cu (no compile cache: the library
// text under test is compiled fresh).
void ExpectKernelMatchesGolden(const std::string& name) {
  std::string dir = SourceDir() + "/tests/worker/device_library/" + name;
  if (access((dir + "/operator.json").c_str(), R_OK) != 0) dir = "tests/worker/device_library/" + name;
  OperatorSpec op = LoadOp(dir);
  ASSERT_EQ(op.name, name);
  CompilerOptions copts;
  copts.cache_dir = "";
  copts.pch_dir = "";
  Compiler compiler(copts);
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  req.candidate = CompileSeed(compiler, op, name);
  ASSERT_FALSE(req.golden.cubin.empty());
  ASSERT_FALSE(req.candidate.cubin.empty());
  req.time = false;
  req.seeds = 2;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << name << ": " << OutcomeName(r.outcome) << ": " << r.detail;
  for (const ConfigResult& c : r.configs)
    std::printf("[ attn     ] %-16s %s rel_l2 %.3g max_abs %.3g\n", name.c_str(), c.config.c_str(),
                c.correctness.rel_l2, c.correctness.max_abs);
}

// wgmma.cuh: wgmma_m64k16_bf16_rs<128> with A fragments loaded from global memory in the mma.m16n8k16
// A layout and B as two N-major 128B-swizzled panels (V's layout in attention), the first step with
// scale-d = 0 over preset accumulators, read back after wgmma_fence_acc.
TEST(GpuAttentionPrimitives, RegisterAWgmma) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("wgmma_rs_pv");
}

}  // namespace
}  // namespace forgek
