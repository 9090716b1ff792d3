// forgek/wgmma_pipeline.cuh (and the e4m3 wgmma of forgek/wgmma.cuh) on a real GPU: each test operator
// under tests/worker/device_library/<name>/ has a kernel.cu built on the pipeline and a golden.cu that
// computes the same product without the library; the worker evaluates the kernel against the golden on
// every config and two fresh seeds, as it does any candidate.
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

// The test operator's kernel at its first params, or at `params_json`.
void ExpectPipelineMatchesGolden(const std::string& name, const char* params_json = nullptr) {
  std::string dir = SourceDir() + "/tests/worker/device_library/" + name;
  if (access((dir + "/operator.json").c_str(), R_OK) != 0) dir = "tests/worker/device_library/" + name;
  OperatorSpec op = LoadOp(dir);
  ASSERT_EQ(op.name, name);
  Compiler compiler(testing::NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  if (params_json == nullptr) {
    req.candidate = CompileSeed(compiler, op, name);
  } else {
    Candidate kernel;
    Diagnostics diags;
    ASSERT_TRUE(LoadSeed(op, &kernel, &diags)) << FormatDiagnostics(diags);
    req.candidate = testing::CompileLoaded(compiler, kernel, op.dir + "/" + op.seed, name, params_json);
  }
  ASSERT_FALSE(req.golden.cubin.empty());
  ASSERT_FALSE(req.candidate.cubin.empty());
  req.time = false;
  req.seeds = 2;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << name << ": " << OutcomeName(r.outcome) << ": " << r.detail;
  for (const ConfigResult& c : r.configs)
    std::printf("[ pipeline ] %-20s %s rel_l2 %.3g max_abs %.3g\n", name.c_str(), c.config.c_str(),
                c.correctness.rel_l2, c.correctness.max_abs);
}

// bf16 operands: 128 x 128 tiles, a 2-slot ring wrapped by 5 k-tiles, a cluster of 2 multicasting B,
// one persistent cluster over two tiles per block, M not a multiple of the tile.
TEST(GpuWgmmaPipeline, Bf16ClusterPersistentMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectPipelineMatchesGolden("wgmma_pipeline_bf16");
}

// The ping-pong schedule: 128 x 128 tiles, one persistent cluster of 2 over three tiles per block, so
// consumer 0 computes tiles 0 and 2 and consumer 1 tile 1, taking turns and skipping each other's k-tiles.
TEST(GpuWgmmaPipeline, PingPongTurnsMatchAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectPipelineMatchesGolden("wgmma_pipeline_pingpong");
}

// e4m3 operands through fk::wgmma_m64k32_e4m3: 64 x 256 tiles (the column split of the consumers),
// promotion every 2 k-tiles over 4, M not a multiple of the tile.
TEST(GpuWgmmaPipeline, E4m3PromotedMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectPipelineMatchesGolden("wgmma_pipeline_e4m3");
}

// fk::WgmmaTmaStore: 64 x 256 tiles (column split), one 64-column panel of staging per round reused
// across rounds and tiles of one persistent block, a row- and column-dependent transform, clipped rows.
TEST(GpuWgmmaPipeline, TmaStoreEpilogueMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectPipelineMatchesGolden("wgmma_pipeline_tma_store");
}

// The same staged by stmatrix (four 8x8 matrices a warp instruction), one and two panels per round.
TEST(GpuWgmmaPipeline, TmaStoreEpilogueByStmatrixMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectPipelineMatchesGolden("wgmma_pipeline_tma_store", R"({"BM":64,"BN":256,"STAGES":2,"PANELS":1,"STSM":1})");
  ExpectPipelineMatchesGolden("wgmma_pipeline_tma_store", R"({"BM":64,"BN":256,"STAGES":2,"PANELS":2,"STSM":1})");
}

}  // namespace
}  // namespace forgek
