// What a person reads while a run goes and at its end: the progress line names the config that
// makes a candidate `slower`, and attempts are numbered from 1 everywhere (lineage included).
#include <gtest/gtest.h>

#include "forgek/run/run.h"
#include "loop_fixture.h"
#include "scripted_agent.h"
#include "scripted_evaluator.h"

namespace forgek {
namespace {

// Twice as fast as the reference on "small", 10% slower on "large": faster on the geomean.
double SlowerOnLarge(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  return config == "small" ? 50.0 : 110.0;
}

TEST(ProgressLine, ASlowerCandidateWithAFasterGeomeanNamesTheConfigAndAttemptsCountFromOne) {
  LoopFixture fx;
  Candidate family;
  Diagnostics diags;
  ASSERT_TRUE(LoadCandidateFile(fx.dir.file("toy/families/tiled.cu"), &family, &diags)) << FormatDiagnostics(diags);
  ScriptedAgent agent(family, "families/tiled.cu", {{{"TILE", 1}, {"UNROLL", 1}}});
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(SlowerOnLarge);
  RunServices services{&agent, &compiler, &evaluator, nullptr};
  std::vector<std::string> progress;
  services.progress = [&](const std::string& line) { progress.push_back(line); };
  RunOptions opts;
  opts.iterations = 1;
  RunSummary summary;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &summary, &err)) << err;
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0],
            "attempt 1/1 | slower 1.348x (geomean; slower on large 0.909x) | best 1.348x vs incumbent | slower=1");

  // The summary numbers the attempt as the progress line did: 1, in the best line and the lineage.
  const std::string text = RunSummaryText(summary);
  EXPECT_NE(text.find("best: attempt 1, families/tiled.cu"), std::string::npos) << text;
  EXPECT_NE(text.find("  new -> attempt 1 slower 1.348x"), std::string::npos) << text;
  EXPECT_EQ(summary.best_iteration, 0) << "the JSON keeps the store's 0-based iteration";
}

}  // namespace
}  // namespace forgek
