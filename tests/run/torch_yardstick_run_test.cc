// A run of an operator whose golden is a PyTorch problem ends with PyTorch beside the kernel that
// serves each config (the seal's, else the incumbent's): eager and torch.compile in its summary,
// the table and the JSON; an operator with a CUDA golden asks for none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/core/torch_helper.h"
#include "forgek/knowledge/store.h"
#include "forgek/run/run.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

// A scripted GPU that answers the yardstick as the worker would: torch eager at 80 us, torch.compile
// at 40 us, and the kernel alone timed (no incumbent) beside them.
class YardstickEvaluator : public ScriptedEvaluator {
 public:
  YardstickEvaluator() : ScriptedEvaluator(Model) {}
  EvalResult Evaluate(const EvalRequest& req) override {
    if (req.torch_yardstick.empty()) return ScriptedEvaluator::Evaluate(req);
    requests.push_back(req);
    EvalResult r;
    r.outcome = Outcome::correct;
    for (const ConfigSpec& c : req.op->configs) {
      ConfigResult cr;
      cr.config = c.name;
      cr.correctness.ok = true;
      cr.candidate.median_us = Model(req.candidate, c.name);
      cr.candidate.samples = 50;
      cr.torch.eager.median_us = 80;
      cr.torch.eager.samples = 30;
      cr.torch.eager.rel_noise = 0.01;
      cr.torch.compile_error = "torch.compile: BackendCompilerFailed: scripted";
      cr.torch.device = "cuda";
      r.configs.push_back(cr);
    }
    return r;
  }
};

struct TorchRig : LoopFixture {
  Store store;
  Compiler compiler{TestCompilerOptions(dir)};
  BuiltinAgent agent{BuiltinAgentOptions{.seed = 4}};
  std::string err;
  TorchRig() {
    op.families = {"families/tiled.cu"};
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  // A run of `iterations` attempts on `gpu`, one proposal at a time.
  RunSummary Run(Evaluator* gpu, int iterations) {
    RunServices services{&agent, &compiler, gpu, &store};
    RunOptions opts;
    opts.iterations = iterations;
    opts.batch = 1;
    RunSummary summary;
    EXPECT_TRUE(RunOptimisation(op, opts, services, &summary, &err)) << err;
    return summary;
  }
};

bool TorchAvailable(std::string* why) {
  TorchHelperPaths paths;
  TorchCheck check;
  return FindTorchHelper(&paths, why) && CheckTorch(paths, &check, why);
}

TEST(TorchYardstickRun, TheKernelServingEachConfigIsTimedBesidePyTorch) {
  std::string why;
  if (!TorchAvailable(&why)) GTEST_SKIP() << "a PyTorch golden needs python3 with torch: " << why;
  TorchRig rig;
  WriteFile(rig.dir.file("toy/golden.py"), "# the scripted evaluator computes no golden\n");
  rig.op.golden = "golden.py";
  YardstickEvaluator gpu;
  RunSummary summary = rig.Run(&gpu, 4);
  if (HasFailure()) return;

  // One yardstick request, the last, with the problem file as the golden.
  int asked = 0;
  for (const EvalRequest& r : gpu.requests) asked += !r.torch_yardstick.empty();
  ASSERT_EQ(asked, 1);
  const EvalRequest& last = gpu.requests.back();
  EXPECT_EQ(last.torch_yardstick, rig.dir.file("toy/golden.py")) << "the problem is its own yardstick";
  EXPECT_EQ(last.golden.torch_file, rig.dir.file("toy/golden.py"));
  EXPECT_TRUE(last.incumbent.library.empty() && last.incumbent.cubin.empty()) << "the kernel is timed alone";
  const bool sealed = !summary.seal_id.empty();
  // What serves each config: the seal's kernel (a tiled instance) or the incumbent (the library).
  EXPECT_EQ(last.candidate.library.empty(), sealed) << last.candidate.library;

  ASSERT_EQ(summary.configs.size(), rig.op.configs.size());
  for (const ConfigComparison& c : summary.configs) {
    EXPECT_EQ(c.torch_kernel, sealed ? "seal" : "incumbent") << c.config;
    EXPECT_GT(c.torch_kernel_us, 0) << c.config;
    EXPECT_DOUBLE_EQ(c.torch.eager.median_us, 80) << c.config;
  }
  nlohmann::json j = nlohmann::json::parse(RunSummaryJson(summary));
  for (const auto& c : j["configs"]) {
    ASSERT_TRUE(c.contains("torch")) << c.dump();
    EXPECT_NEAR(c["torch"]["speedup_vs_eager"].get<double>(), 80 / c["torch"]["kernel_us"].get<double>(), 1e-9);
    EXPECT_EQ(c["torch"]["compile"]["error"], "torch.compile: BackendCompilerFailed: scripted");
    EXPECT_FALSE(c["torch"].contains("speedup_vs_compile"));
  }
  const std::string text = RunSummaryText(summary);
  EXPECT_NE(text.find("PyTorch beside the kernel that serves each config"), std::string::npos) << text;
  EXPECT_NE(text.find("torch.compile: torch.compile: BackendCompilerFailed: scripted"), std::string::npos) << text;
  bool staged = false;
  for (const RunStage& s : summary.stages) staged |= s.name == "PyTorch yardstick";
  EXPECT_TRUE(staged);
}

// A built-in operator (a CUDA golden) that names scripts/torch_ops.py's form as its yardstick: the
// run asks for it by name; no python is needed for that until the worker runs it.
TEST(TorchYardstickRun, ANamedTorchOpsYardstickIsAskedByName) {
  TorchRig rig;
  rig.op.yardstick_torch_ops = "toy_scale";
  YardstickEvaluator gpu;
  RunSummary summary = rig.Run(&gpu, 2);
  if (HasFailure()) return;
  ASSERT_FALSE(gpu.requests.empty());
  EXPECT_EQ(gpu.requests.back().torch_yardstick, "torch_ops:toy_scale");
  EXPECT_TRUE(gpu.requests.back().golden.torch_file.empty());
  for (const ConfigComparison& c : summary.configs) EXPECT_DOUBLE_EQ(c.torch.eager.median_us, 80) << c.config;
}

TEST(TorchYardstickRun, ACudaGoldenAsksForNoYardstick) {
  TorchRig rig;
  YardstickEvaluator gpu;
  RunSummary summary = rig.Run(&gpu, 2);
  if (HasFailure()) return;
  for (const EvalRequest& r : gpu.requests) EXPECT_TRUE(r.torch_yardstick.empty());
  for (const ConfigComparison& c : summary.configs) EXPECT_FALSE(c.torch.asked()) << c.config;
  EXPECT_EQ(RunSummaryText(summary).find("PyTorch beside"), std::string::npos);
}

}  // namespace
}  // namespace forgek
