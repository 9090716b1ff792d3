// Search instances that serve only some configs: drawn by the builtin search, measured where they
// apply, never sealed alone, and able to serve those configs in a dispatch.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/agent/family_space.h"
#include "forgek/run/run.h"
#include "forgek/seal/seal.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"

namespace forgek {
namespace {

// WIDE = 1 only fits the small config (a whole row per block, say); WIDE = 0 fits every config.
constexpr const char* kSplitFamily = R"CU(/* forgek
{ "name": "split", "mechanisms": ["vector_16B"],
  "params": {"WIDE": [0, 1], "UNROLL": [1, 2]},
  "constraints": ["WIDE == 0 || N <= 4096"],
  "launches": [{"kernel": "scale", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void scale(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i] * (WIDE + UNROLL);
}
)CU";

// The wide instances are 2x the reference on small; the others are slower than it everywhere.
double SplitFamilyModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  if (k.params.at("WIDE") == 1) return config == "small" ? 50.0 : 1e9;  // never measured on large
  return 120.0;
}

TEST(PartialInstances, TheSearchSpaceHoldsInstancesThatServeSomeConfigs) {
  LoopFixture fx;
  Candidate family;
  Diagnostics diags;
  ASSERT_TRUE(ParseCandidate("split.cu", kSplitFamily, &family, &diags)) << FormatDiagnostics(diags);
  const ParamAssignment wide{{"WIDE", 1}, {"UNROLL", 1}}, narrow{{"WIDE", 0}, {"UNROLL", 1}};
  FamilySpace every(family, fx.op), some(family, fx.op, Coverage::some_config);
  std::string why;
  EXPECT_FALSE(every.Valid(wide, &why));
  EXPECT_NE(why.find("config large"), std::string::npos) << why;
  EXPECT_TRUE(some.Valid(wide));
  EXPECT_TRUE(every.Valid(narrow) && some.Valid(narrow));
  OperatorSpec big_only = fx.op;
  big_only.configs = {fx.op.configs[1]};
  FamilySpace none(family, big_only, Coverage::some_config);
  EXPECT_FALSE(none.Valid(wide, &why));
  EXPECT_EQ(why.rfind("no config: config large", 0), 0u) << why;
}

TEST(PartialInstances, AnInstanceServingOneConfigIsMeasuredThereAndServesItInADispatch) {
  LoopFixture fx;
  WriteFile(fx.dir.file("toy/families/split.cu"), kSplitFamily);
  fx.op.families = {"families/split.cu"};
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(SplitFamilyModel);
  BuiltinAgent agent({.seed = 3});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 8;
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.attempts, 4) << "all four instances are drawn, the two wide ones included";

  // The wide instances were evaluated on small alone.
  int wide = 0;
  for (const EvalRequest& r : evaluator.requests)
    if (!r.candidate.params.empty() && r.candidate.params.at("WIDE") == 1) {
      EXPECT_EQ(r.configs, std::vector<std::string>{"small"});
      ++wide;
    }
  EXPECT_GE(wide, 2);
  // Never sealed alone (it serves one config of two), yet it takes small in a dispatch.
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  EXPECT_EQ(s.seal_reason.rfind("sealed a dispatch of 2 kernels", 0), 0u) << s.seal_reason;
  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(s.seal_id, &seal, &found, &err) && found) << err;
  nlohmann::json d = nlohmann::json::parse(seal.metadata_json).at("dispatch");
  for (const nlohmann::json& row : d.at("table")) {
    const nlohmann::json& k = d.at("kernels").at(row.at("kernel").get<size_t>());
    if (row.at("config") == "small")
      EXPECT_EQ(k.at("params").at("WIDE"), 1) << k.dump();
    else
      EXPECT_TRUE(k.contains("reference")) << k.dump();
  }
  EXPECT_NEAR(seal.config_us.at("small"), 50, 1e-9);
  EXPECT_NEAR(seal.config_us.at("large"), 100, 1e-9);
}

}  // namespace
}  // namespace forgek
