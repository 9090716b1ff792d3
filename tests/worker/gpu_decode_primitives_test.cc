// The decoding primitives of the device library (device_library/forgek/split_kv.cuh) on a real GPU:
// a small test operator under tests/worker/device_library/split_kv_combine/, whose kernel.cu uses
// the primitives and whose golden.cu computes the same result without the library, evaluated by the
// worker on every config and two fresh seeds, as any candidate is.
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
    std::printf("[ decode   ] %-16s %s rel_l2 %.3g max_abs %.3g\n", name.c_str(), c.config.c_str(),
                c.correctness.rel_l2, c.correctness.max_abs);
}

// split_kv.cuh: paged_row gathers through scattered and repeated pages (page 16 with 4 heads, and
// page 8 with 3 heads and 64 columns); lse2_combine and lse2_union over 8 and 3 states whose lse
// spread over ~+-12, from shared memory (generic loads) and from global memory (ThroughL2).
TEST(GpuDecodePrimitives, PagedRowAndSplitStateCombine) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("split_kv_combine");
}

}  // namespace
}  // namespace forgek
