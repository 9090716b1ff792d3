// An agent measuring against a dispatch incumbent is told, config by config, which kernel serves
// it: no single kernel is "the one to beat".
#include <gtest/gtest.h>

#include <regex>

#include "agent/prompt_builder.h"
#include "forgek/agent/builtin_agent.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_agent.h"
#include "scripted_evaluator.h"

namespace forgek {
namespace {

// TILE >= 4 is fast on "small", TILE <= 2 on "large": no single kernel beats the reference on both.
double SplitModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  const bool big_tile = k.params.at("TILE") >= 4;
  return (config == "small") == big_tile ? 70.0 : 110.0;
}

TEST(DispatchPrompt, TheKernelServingEachConfigOfADispatchIncumbentIsShown) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(SplitModel);
  BuiltinAgent builtin({.seed = 4});
  RunServices services{&builtin, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 10;
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;
  ASSERT_EQ(first.seal_reason.rfind("sealed a dispatch of 2 kernels", 0), 0u) << first.seal_reason;

  PromptTemplates prompts;
  ASSERT_TRUE(prompts.Load(SourceDir() + "/knowledge/prompts", &err)) << err;
  Candidate family;
  Diagnostics diags;
  ASSERT_TRUE(LoadCandidateFile(fx.dir.file("toy/families/tiled.cu"), &family, &diags)) << FormatDiagnostics(diags);
  ScriptedAgent next(family, "families/tiled.cu", {{{"TILE", 1}, {"UNROLL", 1}}});
  std::string incumbent;
  next.seen = [&](const ProposalContext& ctx) {
    if (incumbent.empty()) incumbent = ProposeVariables(ctx, LlmOptions{}, prompts, 1, 1, ParentChoice{})["incumbent"];
  };
  services.agent = &next;
  opts.iterations = 1;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  ASSERT_NE(second.incumbent.find("(dispatch)"), std::string::npos) << second.incumbent;

  EXPECT_EQ(incumbent.find("the one to beat"), std::string::npos) << incumbent;
  EXPECT_NE(incumbent.find("The incumbent is a dispatch"), std::string::npos) << incumbent;
  EXPECT_TRUE(std::regex_search(incumbent, std::regex(R"(\n- small: family families/tiled\.cu with TILE=(4|8), )")))
      << incumbent;
  EXPECT_TRUE(std::regex_search(incumbent, std::regex(R"(\n- large: family families/tiled\.cu with TILE=(1|2), )")))
      << incumbent;
  // Both are instances of one family: its source is shown once, naming the configs it serves.
  EXPECT_NE(incumbent.find("Source A (serves small, large):"), std::string::npos) << incumbent;
  EXPECT_EQ(incumbent.find("Source B"), std::string::npos) << incumbent;
  EXPECT_NE(incumbent.find("y[i] = x[i] * TILE * UNROLL"), std::string::npos) << incumbent;
}

}  // namespace
}  // namespace forgek
