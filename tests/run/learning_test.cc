// What a run learns, with a scripted evaluator and real NVRTC compiles: only controlled comparisons
// (pairs of attempts differing in one control group, ablations of the best) make verdicts.
#include <gtest/gtest.h>

#include <memory>

#include "forgek/agent/builtin_agent.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "scripted_evaluator.h"
#include "test_util.h"
#include "toy_operator.h"

namespace forgek {
namespace {

// A family claiming wgmma whose tile and pipeline depth are controlled params.
const char* kFamily = R"CU(/* forgek
{ "name": "wg", "mechanisms": ["wgmma", "mbarrier_pipeline"],
  "controls": {"tile": ["TILE"], "mbarrier_pipeline": ["STAGES"]},
  "params": {"TILE": [1, 4], "STAGES": [2, 4]},
  "launches": [{"kernel": "scale", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void scale(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i] * TILE * STAGES;
}
)CU";
const char* kGolden = R"CU(/* forgek
{ "name": "golden", "launches": [{"kernel": "golden", "grid": ["ceil_div(N, 128)"], "block": [128], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void golden(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i];
}
)CU";

// The reference takes 100 us. TILE 1 is a bad tile (150 us), TILE 4 a good one (90 us); two stages
// cost 5% more than four in either tile. Every instance uses wgmma.
double Model(const KernelUnderTest& k, const std::string&) {
  if (!k.library.empty()) return 100.0;
  double t = k.params.at("TILE") == 1 ? 150.0 : 90.0;
  return k.params.at("STAGES") == 2 ? t * 1.05 : t;
}

// The wg family's operator, a store and a compiler, in one temporary folder.
struct WgFixture {
  TempDir dir;
  OperatorSpec op;
  Store store;
  std::unique_ptr<Compiler> compiler;
  WgFixture() {
    WriteFile(dir.file("toy/families/wg.cu"), kFamily);
    WriteFile(dir.file("toy/golden.cu"), kGolden);
    op = ToyOperator(dir.file("toy"), {"families/wg.cu"});
    std::string err;
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
    CompilerOptions copts;
    copts.cache_dir = dir.file("cache");
    copts.threads = 2;
    compiler = std::make_unique<Compiler>(copts);
  }
};

TEST(RunLearning, SlowAndFastWgmmaInstancesRefuteNoMechanismAndStagesAreLearned) {
  WgFixture fx;
  Store& store = fx.store;
  const OperatorSpec& op = fx.op;
  std::string err;
  ScriptedEvaluator evaluator(Model);
  BuiltinAgent agent({.seed = 7});
  RunServices services{&agent, fx.compiler.get(), &evaluator, &store};
  RunOptions opts;
  opts.iterations = 4;  // the whole space: two bad-tile and two good-tile instances
  opts.ablations = 2;
  RunSummary summary;
  ASSERT_TRUE(RunOptimisation(op, opts, services, &summary, &err)) << err;
  ASSERT_EQ(summary.attempts, 4);
  EXPECT_EQ(summary.outcomes["slower"], 2) << "the bad tile is slower than the reference";

  std::vector<DecisionRecord> ds;
  ASSERT_TRUE(store.ListDecisions({}, &ds, &err)) << err;
  const DecisionRecord* stages4 = nullptr;
  for (const DecisionRecord& d : ds) {
    if (d.scope.mechanism == "wgmma") {
      EXPECT_NE(d.verdict, DecisionVerdict::refuted) << d.text;
    }
    EXPECT_FALSE(d.verdict == DecisionVerdict::refuted && d.scope.setting.empty()) << "a whole mechanism refuted: " << d.text;
    EXPECT_EQ(d.settings_json.find("TILE\":1,\"STAGES"), std::string::npos) << "a whole param vector: " << d.text;
    if (d.scope.mechanism == "mbarrier_pipeline" && d.scope.setting == "stages=4") stages4 = &d;
  }
  ASSERT_NE(stages4, nullptr);
  EXPECT_EQ(stages4->verdict, DecisionVerdict::validated) << stages4->text;
  EXPECT_NEAR(stages4->effect, 1.05, 1e-6);
  EXPECT_GE(stages4->comparisons, 2) << "one search pair per tile";

  // The ablation of the best (TILE 4, STAGES 4) ran interleaved against it.
  bool ablated = false;
  for (const EvalRequest& r : evaluator.requests)
    ablated |= r.candidate.label == "ablation" && r.incumbent.params == ParamAssignment{{"STAGES", 4}, {"TILE", 4}};
  EXPECT_TRUE(ablated);
  bool noted = false;
  for (const std::string& n : summary.knowledge_notes) noted |= n.find("ablations of the best: 2 timed") == 0;
  EXPECT_TRUE(noted);

  // The summary says what changed, validated first, each line about one setting.
  ASSERT_FALSE(summary.decisions_learned.empty());
  EXPECT_EQ(summary.decisions_learned.front().rfind("validated: ", 0), 0u) << summary.decisions_learned.front();
  std::string text = RunSummaryText(summary);
  EXPECT_NE(text.find("knowledge changed by this run"), std::string::npos) << text;
  EXPECT_NE(text.find("stages=4"), std::string::npos) << text;
}

// Evaluations that say they took a second: under --time 1.5 the first timed attempt leaves no
// room for an ablation beside the confirmation, so none runs and the stage says so; without --time
// both ablations run.
TEST(RunLearning, AblationsRunOnlyWhileTheyFitBeforeTheConfirmation) {
  auto run = [](double time_s, RunSummary* summary) {
    WgFixture fx;
    std::string err;
    ScriptedEvaluator evaluator(Model);
    evaluator.reported_wall_s = 1.0;
    BuiltinAgent agent({.seed = 7});
    RunServices services{&agent, fx.compiler.get(), &evaluator, &fx.store};
    RunOptions opts;
    opts.iterations = 4;
    opts.ablations = 2;
    opts.time_s = time_s;
    ASSERT_TRUE(RunOptimisation(fx.op, opts, services, summary, &err)) << err;
  };
  auto ablations = [](const RunSummary& s) -> const RunStage* {
    for (const RunStage& st : s.stages)
      if (st.name == "ablations") return &st;
    return nullptr;
  };
  auto ablation_notes = [](const RunSummary& s) {
    std::string notes;
    for (const std::string& n : s.knowledge_notes)
      if (n.find("ablations of the best") != std::string::npos) notes += n;
    return notes;
  };

  RunSummary bounded;
  run(1.5, &bounded);
  EXPECT_EQ(bounded.stop_reason, StopReason::time);
  ASSERT_NE(ablations(bounded), nullptr) << RunSummaryText(bounded);
  EXPECT_EQ(ablations(bounded)->note, "cut by --time after 0 of 2");
  EXPECT_EQ(ablation_notes(bounded), "");

  RunSummary unbounded;
  run(0, &unbounded);
  ASSERT_NE(ablations(unbounded), nullptr) << RunSummaryText(unbounded);
  EXPECT_EQ(ablations(unbounded)->note, "");
  EXPECT_NE(ablation_notes(unbounded).find("ablations of the best: 2 timed"), std::string::npos)
      << ablation_notes(unbounded);
}

TEST(RunLearning, TheSummaryShowsAtMostTenDecisionLinesUnlessAskedForAll) {
  RunSummary s;
  s.operator_name = "gemm_bf16";
  for (int i = 0; i < 15; ++i) s.decisions_learned.push_back("validated: setting " + std::to_string(i));
  s.knowledge_notes = {"ablations of the best: 2 timed against it, 2 comparison(s) recorded"};
  auto count = [](const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("validated: setting"); at != std::string::npos; at = text.find("validated: setting", at + 1))
      ++n;
    return n;
  };
  std::string brief = RunSummaryText(s);
  EXPECT_EQ(count(brief), kSummaryDecisionLines);
  EXPECT_NE(brief.find("... 5 more (-v shows all; forgek knowledge list --op gemm_bf16)"), std::string::npos) << brief;
  EXPECT_NE(brief.find("ablations of the best"), std::string::npos);
  std::string all = RunSummaryText(s, true);
  EXPECT_EQ(count(all), 15u);
  EXPECT_EQ(all.find("more (-v"), std::string::npos);
  EXPECT_NE(RunSummaryJson(s).find("knowledge_notes"), std::string::npos);
}

}  // namespace
}  // namespace forgek
