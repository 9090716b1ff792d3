// Prompt templates: the {{name}} renderer and the shipped templates rendered from a context.
#include <gtest/gtest.h>

#include "agent/llm_parents.h"
#include "agent/prompt_builder.h"
#include "agent/prompt_template.h"
#include "forgek/core/device_library.h"
#include "llm_test_server.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(RenderTemplate, SubstitutesNamesWithOptionalSpaces) {
  std::string out, err;
  ASSERT_TRUE(RenderTemplate("t.md", "a {{x}} b {{ y_2 }} c", {{"x", "1"}, {"y_2", "two"}}, &out, &err)) << err;
  EXPECT_EQ(out, "a 1 b two c");
}

TEST(RenderTemplate, SubstitutedTextIsNotScannedAgain) {
  std::string out, err;
  ASSERT_TRUE(RenderTemplate("t.md", "{{code}}", {{"code", "int a[] = {{1}}; {{x}}"}}, &out, &err)) << err;
  EXPECT_EQ(out, "int a[] = {{1}}; {{x}}");
}

TEST(RenderTemplate, OtherBracesStayLiteral) {
  std::string out, err;
  ASSERT_TRUE(RenderTemplate("t.md", "int a[2][1] = {{0}, {1}}; {{ }} {{a-b}}", {}, &out, &err)) << err;
  EXPECT_EQ(out, "int a[2][1] = {{0}, {1}}; {{ }} {{a-b}}");
}

TEST(RenderTemplate, UnknownPlaceholderNamesFileLineAndName) {
  std::string out = "untouched", err;
  EXPECT_FALSE(RenderTemplate("prompts/propose.md", "line one\nline {{two}}\n", {}, &out, &err));
  EXPECT_EQ(err, "prompts/propose.md:2: unknown placeholder {{two}}");
  EXPECT_EQ(out, "untouched");
}

TEST(PromptTemplates, MissingFileIsNamed) {
  TempDir dir;
  PromptTemplates t;
  std::string err;
  EXPECT_FALSE(t.Load(dir.path(), &err));
  EXPECT_NE(err.find(dir.path() + "/system.md"), std::string::npos) << err;
}

TEST(PromptTemplates, UnknownPlaceholderInAFileIsNamed) {
  TempDir dir;
  for (const char* name : {"system.md", "propose.md", "repair.md", "feedback.md", "format_repair.md", "candidate_format.md"}) {
    WriteFile(dir.file(name), "ok");
  }
  WriteFile(dir.file("repair.md"), "Outcome {{outcome}}, cost {{cost}}");
  PromptTemplates t;
  std::string err, out;
  ASSERT_TRUE(t.Load(dir.path(), &err)) << err;
  EXPECT_FALSE(t.Render("repair.md", {{"outcome", "wrong"}}, &out, &err));
  EXPECT_EQ(err, dir.path() + "/repair.md:1: unknown placeholder {{cost}}");
}

class ShippedPrompts : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(prompts_.Load(SourceDir() + "/knowledge/prompts", &err)) << err;
  }
  PromptTemplates prompts_;
  OperatorSpec op_ = testing::VectorAddOperator();
  LlmOptions opts_;
};

TEST_F(ShippedPrompts, ProposePromptHoldsTheWholeContext) {
  Candidate incumbent;
  incumbent.source = "/* forgek {} */\n__global__ void incumbent_kernel() {}\n";
  ProposalContext ctx;
  ctx.op = &op_;
  ctx.arch = "sm90";
  ctx.hardware = "H200: 132 SMs, 4.8 TB/s";
  ctx.incumbent_summary = "memory bound at 91% of DRAM bandwidth";
  ctx.incumbent_source = &incumbent;
  ctx.decisions.push_back({"vector_16B", "{}", DecisionVerdict::validated, 1.12, 0.8, "16-byte loads help elementwise on sm90"});
  AttemptSummary a;
  a.iteration = 3;
  a.outcome = Outcome::wrong;
  a.feedback = "max abs error 3.2 at index 17";
  ctx.history.push_back(a);
  ctx.prior_results.push_back({"families/vec.cu", {{"VEC", 4}}, 91.5, "attempt 7 of run 0123abcd on large: 91.5% SOL"});

  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 2, 3, ParentChoice{});
  std::string text, system, err;
  ASSERT_TRUE(prompts_.Render("propose.md", vars, &text, &err)) << err;
  ASSERT_TRUE(prompts_.Render("system.md", vars, &system, &err)) << err;
  for (const char* expected :
       {"vadd", "out[i] = x[i] + y[i]", "x (input, f32): [N]", "out (output, f32): [N]", "small: N=1024; x [1024]",
        "large: N=4096; x [4096], y [4096], out [4096]", "H200: 132 SMs", "memory bound at 91%",
        "incumbent_kernel", "16-byte loads help elementwise", "validated", "attempt 4", "wrong",
        "max abs error 3.2 at index 17", "\"launches\"", "proposal 2 of 3", "```cuda",
        "family families/vec.cu (VEC=4): attempt 7 of run 0123abcd on large: 91.5% SOL"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected;
  }
  EXPECT_NE(system.find("sm90"), std::string::npos);
}

// The model sees the device library's API, and a stored incumbent (its library code expanded into
// it) as the includes it was written with.
TEST_F(ShippedPrompts, TheDeviceLibraryApiIsShownAndStoredSourcesShowTheirIncludes) {
  const DeviceHeader& first = ShippedDeviceLibrary().front();
  Candidate incumbent;
  incumbent.source = ExpandedSource("/* forgek {} */\n#include <" + first.name + ">\nint own_code;\n");
  ASSERT_NE(incumbent.source.find("device library: begin"), std::string::npos);
  ProposalContext ctx;
  ctx.op = &op_;
  ctx.incumbent_source = &incumbent;
  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("propose.md", vars, &text, &err)) << err;
  EXPECT_NE(text.find("## Device library"), std::string::npos);
  for (const DeviceHeader& h : ShippedDeviceLibrary())
    EXPECT_NE(text.find("#include <" + h.name + ">\n//"), std::string::npos) << "API of " << h.name << " missing";
  EXPECT_NE(vars["incumbent"].find("#include <" + first.name + ">\nint own_code;"), std::string::npos)
      << vars["incumbent"];
  EXPECT_EQ(vars["incumbent"].find("device library: begin"), std::string::npos);
}

// A 10 MB operator description went whole into every request: each piece is cut at
// max_prompt_field_chars with a visible marker, and the rendered prompt stays bounded.
TEST_F(ShippedPrompts, HugeOperatorTextIsCutWithAMarker) {
  op_.description = std::string(10u << 20, 'd');
  ProposalContext ctx;
  ctx.op = &op_;
  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  const std::string& description = vars["operator_description"];
  EXPECT_LT(description.size(), opts_.max_prompt_field_chars + 100);
  EXPECT_NE(description.find("[... cut: " + std::to_string((10u << 20) - opts_.max_prompt_field_chars) +
                             " more characters]"),
            std::string::npos);
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("propose.md", vars, &text, &err)) << err;
  EXPECT_LT(text.size(), 200000u);
}

// An imported operator's golden is a PyTorch problem, which its description only names: the model
// sees the problem's source, or a definition's reference with its scalars, as what to compute.
TEST_F(ShippedPrompts, APyTorchGoldenIsShownAsWhatToCompute) {
  TempDir dir;
  op_.dir = dir.path();
  op_.golden = "golden.py";
  WriteFile(dir.file("golden.py"), "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n");
  ProposalContext ctx;
  ctx.op = &op_;
  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  EXPECT_NE(vars["golden"].find("```python\nclass Model(nn.Module):"), std::string::npos) << vars["golden"];
  EXPECT_NE(vars["golden"].find("return torch.relu(x)"), std::string::npos) << vars["golden"];
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("propose.md", vars, &text, &err)) << err;
  EXPECT_NE(text.find("What the golden computes"), std::string::npos);
  EXPECT_NE(text.find("return torch.relu(x)"), std::string::npos);

  op_.golden = "golden.json";
  WriteFile(dir.file("golden.json"), R"({"flashinfer": {"name": "rms", "reference": "def run(x, eps):\n    return x"},
                                         "scalars": {"eps": 1e-06}})");
  vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  EXPECT_NE(vars["golden"].find("def run(x, eps):\n    return x"), std::string::npos) << vars["golden"];
  EXPECT_NE(vars["golden"].find("eps=1e-06"), std::string::npos) << vars["golden"];

  op_.golden = "missing.py";
  vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  EXPECT_NE(vars["golden"].find("could not be read"), std::string::npos) << vars["golden"];
  op_.golden = "golden.cu";
  vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  EXPECT_NE(vars["golden"].find("A CUDA kernel"), std::string::npos) << vars["golden"];
}

TEST_F(ShippedPrompts, LibraryIncumbentIsNamed) {
  ProposalContext ctx;
  ctx.op = &op_;
  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{});
  EXPECT_NE(vars["incumbent"].find("test.vadd"), std::string::npos);
  EXPECT_EQ(vars["decisions"], "(none)");
  EXPECT_EQ(vars["history"], "(none)");
  EXPECT_EQ(vars["prior_results"], "(none)");
}

TEST_F(ShippedPrompts, HistoryKeepsOnlyRecentAttempts) {
  ProposalContext ctx;
  ctx.op = &op_;
  for (int i = 1; i <= 12; ++i) {
    AttemptSummary a;
    a.iteration = i;
    a.outcome = Outcome::slower;
    ctx.history.push_back(a);
  }
  opts_.recent_attempts = 3;
  std::string history = ProposeVariables(ctx, opts_, prompts_, 1, 1, ParentChoice{})["history"];
  // Attempts are numbered from 1 for the model as for people: iteration 9 is attempt 10.
  EXPECT_EQ(history.find("attempt 10:"), std::string::npos);
  EXPECT_NE(history.find("attempt 11:"), std::string::npos);
  EXPECT_NE(history.find("attempt 13:"), std::string::npos);
}

TEST_F(ShippedPrompts, RepairPromptQuotesCutFeedback) {
  AttemptSummary a;
  a.outcome = Outcome::compile_error;
  a.feedback = "error: x\n" + std::string(10000, 'e');
  opts_.max_feedback_chars = 100;
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("repair.md", RepairVariables(a, opts_), &text, &err)) << err;
  EXPECT_NE(text.find("compile_error"), std::string::npos);
  EXPECT_NE(text.find("error: x"), std::string::npos);
  EXPECT_NE(text.find("[... cut: 9909 more characters]"), std::string::npos);
  ASSERT_TRUE(prompts_.Render("format_repair.md", FormatRepairVariables("no code block", opts_), &text, &err)) << err;
  EXPECT_NE(text.find("no code block"), std::string::npos);
}

}  // namespace
}  // namespace forgek

namespace forgek {
namespace {

AttemptSummary Timed(int iteration, const std::string& hash, double speedup, std::vector<std::string> mechanisms,
                     const std::string& family = "") {
  AttemptSummary a;
  a.iteration = iteration;
  a.candidate_hash = hash;
  a.outcome = speedup > 1.01 ? Outcome::faster : speedup < 0.99 ? Outcome::slower : Outcome::same;
  a.geomean_speedup = speedup;
  a.family = family;
  a.mechanisms = std::move(mechanisms);
  a.source = "// source of " + hash + "\n";
  a.configs = {{"small", 10.0 / speedup, 10.0, 40.0 * speedup, OutcomeName(a.outcome)},
               {"large", 20.0 / speedup, 20.0, 50.0 * speedup, OutcomeName(a.outcome)}};
  return a;
}

TEST(ParentRule, IslandsBestFirstWithExplorationAndRunnersUp) {
  ProposalContext ctx;
  ctx.history.push_back(Timed(0, "vecA", 1.20, {"vector_16B"}));
  ctx.history.push_back(Timed(1, "vecB", 1.10, {"vector_16B"}));  // same architecture as vecA, worse
  ctx.history.push_back(Timed(2, "warp", 0.90, {"warp_shuffle_reduction"}));
  AttemptSummary broken;
  broken.candidate_hash = "broken";
  broken.outcome = Outcome::compile_error;
  broken.source = "// broken";
  ctx.history.push_back(broken);  // not correct: never a parent
  PriorResult earlier;
  earlier.family = "";
  earlier.candidate_hash = "old";
  earlier.kernel_source = "// earlier run";
  earlier.sol_pct = 45;
  earlier.source = "attempt 4 of run 0123abcd";
  ctx.prior_results.push_back(earlier);

  std::vector<ParentProgram> pop = ParentPopulation(ctx);
  ASSERT_EQ(pop.size(), 4u);
  EXPECT_EQ(pop[0].hash, "vecA") << "fitness is the geomean SOL %";
  EXPECT_EQ(pop[1].hash, "vecB");
  EXPECT_EQ(pop[2].hash, "old");
  EXPECT_EQ(pop[3].hash, "warp");

  // Islands: vecA (vector_16B), old (earlier free-form), warp.
  ParentChoice c0 = ChooseParents(pop, 0, 2);
  EXPECT_FALSE(c0.new_architecture);
  ASSERT_EQ(c0.parents.size(), 2u);
  EXPECT_EQ(c0.parents[0]->hash, "vecA");
  EXPECT_EQ(c0.parents[1]->hash, "old") << "the second parent is another island, not vecB";
  EXPECT_EQ(ChooseParents(pop, 1, 2).parents[0]->hash, "old") << "runners-up take turns";
  EXPECT_EQ(ChooseParents(pop, 2, 2).parents[0]->hash, "vecA");
  EXPECT_TRUE(ChooseParents(pop, 3, 2).new_architecture) << "one request in four explores";
  EXPECT_EQ(ChooseParents(pop, 4, 2).parents[0]->hash, "warp");
  EXPECT_TRUE(ChooseParents({}, 0, 2).new_architecture) << "nothing measured yet: a first architecture";
}

TEST_F(ShippedPrompts, ParentsAndTheirMeasurementsReachTheProposePrompt) {
  ProposalContext ctx;
  ctx.op = &op_;
  ctx.history.push_back(Timed(5, "vecA", 1.25, {"vector_16B"}));
  std::vector<ParentProgram> pop = ParentPopulation(ctx);
  TemplateVars vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ChooseParents(pop, 0, 2));
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("propose.md", vars, &text, &err)) << err;
  for (const char* expected : {"Parent A: attempt 6 of this run", "// source of vecA", "| small | 8.00 | 10.00 | 1.250x",
                               "faster", "IMPROVE PARENT A", "\"BLOCK\": [128, 256"})
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected << "\n" << text;
  vars = ProposeVariables(ctx, opts_, prompts_, 1, 1, ChooseParents(pop, 3, 2));
  EXPECT_NE(vars["task"].find("NEW ARCHITECTURE"), std::string::npos);
}

TEST_F(ShippedPrompts, FeedbackReportsTimesVerdictsAndTheFamilySearch) {
  ProposalContext ctx;
  ctx.op = &op_;
  ctx.incumbent_summary = "memory bound at 91% of DRAM bandwidth";
  AttemptSummary a = Timed(2, "fam1", 0.80, {}, "llm/vadd-0badf00d.cu");
  a.params = {{"BLOCK", 64}};
  a.feedback = "geomean 0.800x (noise 0.7%) over 2 configs; slower on small 0.800x";
  ctx.history.push_back(a);
  AttemptSummary tuned = Timed(3, "fam2", 1.30, {}, "llm/vadd-0badf00d.cu");
  tuned.params = {{"BLOCK", 256}};
  ctx.history.push_back(tuned);
  std::string text, err;
  ASSERT_TRUE(prompts_.Render("feedback.md", FeedbackVariables(a, ctx, opts_), &text, &err)) << err;
  for (const char* expected : {"attempt 3", "`slower`", "| large | 25.00 | 20.00 | 0.800x | 40.0 | slower |",
                               "memory bound at 91%", "tried 2 instance(s)", "- BLOCK=256: faster 1.300x",
                               "- BLOCK=64: slower 0.800x", "not faster than the incumbent"})
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected << "\n" << text;
  EXPECT_LT(text.find("BLOCK=256"), text.find("BLOCK=64")) << "best instance first";
}

}  // namespace
}  // namespace forgek
