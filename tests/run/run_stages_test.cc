// A run's fixed cost: the incumbent's analysis is kept in the store (keyed by kernel binary, device
// and driver) and reused, the end of the run is counted inside --time, and each stage's time is
// reported.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "run/incumbent_analysis.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

size_t ProfilesOf(const ScriptedEvaluator& e, const std::string& library) {
  size_t n = 0;
  for (const ProfileRequest& r : e.profile_requests) n += r.kernel.library == library ? 1 : 0;
  return n;
}

std::vector<std::string> StageNames(const RunSummary& s) {
  std::vector<std::string> names;
  for (const RunStage& st : s.stages) names.push_back(st.name);
  return names;
}

TEST(RunStages, TheSecondRunReusesTheIncumbentsAnalysisFromTheStore) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  RunOptions opts;
  opts.iterations = 3;
  opts.allow_seal = false;  // both runs start from the expert reference

  ScriptedEvaluator first_gpu(Model);
  BuiltinAgent agent({.seed = 1});
  RunServices services{&agent, &compiler, &first_gpu, &store};
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;
  EXPECT_EQ(ProfilesOf(first_gpu, "scripted.reference"), 1u) << "the first run profiles the reference";
  ASSERT_GE(first.stages.size(), 3u);
  EXPECT_EQ(StageNames(first)[0], "start");
  EXPECT_EQ(StageNames(first)[1], "incumbent analysis");
  EXPECT_EQ(StageNames(first)[2], "search");
  EXPECT_EQ(first.stages[1].note, "");

  ScriptedEvaluator second_gpu(Model);
  BuiltinAgent agent2({.seed = 2});
  services.agent = &agent2;
  services.evaluator = &second_gpu;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  EXPECT_EQ(ProfilesOf(second_gpu, "scripted.reference"), 0u) << "the same reference on the same GPU and driver";
  ASSERT_GE(second.stages.size(), 2u);
  EXPECT_EQ(second.stages[1].note, "2 of 2 configs from the store");

  // The stages are in the text and the JSON, and the run's wall time holds them all.
  double sum = 0;
  for (const RunStage& st : second.stages) sum += st.seconds;
  EXPECT_LE(sum, second.wall_s + 1e-6);
  EXPECT_NE(RunSummaryText(second).find("stages: start "), std::string::npos) << RunSummaryText(second);
  nlohmann::json j = nlohmann::json::parse(RunSummaryJson(second));
  ASSERT_TRUE(j["stages"].is_array());
  EXPECT_EQ(j["stages"][1]["name"], "incumbent analysis");
  EXPECT_EQ(j["stages"][1]["note"], "2 of 2 configs from the store");
}

TEST(RunStages, TheCacheKeyNamesTheBinaryTheConfigTheDeviceAndTheDriver) {
  LoopFixture fx;
  KernelUnderTest k{"k", "", "cubin bytes", {}, {{"TILE", 2}}};
  const std::string key = AnalysisCacheKey(fx.op, k, "small", "H200", "580.1");
  EXPECT_EQ(key, AnalysisCacheKey(fx.op, k, "small", "H200", "580.1"));
  EXPECT_NE(key, AnalysisCacheKey(fx.op, k, "large", "H200", "580.1"));
  EXPECT_NE(key, AnalysisCacheKey(fx.op, k, "small", "H100", "580.1"));
  EXPECT_NE(key, AnalysisCacheKey(fx.op, k, "small", "H200", "580.2"));
  KernelUnderTest other_binary = k;
  other_binary.cubin = "other bytes";
  EXPECT_NE(key, AnalysisCacheKey(fx.op, other_binary, "small", "H200", "580.1"));
  KernelUnderTest other_params = k;
  other_params.params["TILE"] = 4;
  EXPECT_NE(key, AnalysisCacheKey(fx.op, other_params, "small", "H200", "580.1"));
  KernelUnderTest other_launch = k;
  other_launch.manifest.launches.push_back({"k", {"1"}, {"128"}, {}, "0", {}, ""});
  EXPECT_NE(key, AnalysisCacheKey(fx.op, other_launch, "small", "H200", "580.1"));
  OperatorSpec resized = fx.op;
  resized.configs[0].values["N"] *= 2;
  EXPECT_NE(key, AnalysisCacheKey(resized, k, "small", "H200", "580.1"));
}

// Evaluations that say they took a second each: with --time 0.9 the confirmation that the end of
// the run needs does not fit after the first timed attempt, so the search stops there although
// hardly any real time has passed.
TEST(RunStages, TheEndOfTheRunIsCountedInsideTheTimeBudget) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator gpu(Model);
  gpu.reported_wall_s = 1.0;
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &gpu, &store};
  RunOptions opts;
  opts.iterations = 50;  // the space (10 instances) would be exhausted long before
  opts.time_s = 0.9;
  RunSummary summary;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &summary, &err)) << err;
  EXPECT_EQ(summary.stop_reason, StopReason::time);
  EXPECT_LT(summary.attempts, 10);
  const std::vector<std::string> names = StageNames(summary);
  EXPECT_NE(std::find(names.begin(), names.end(), "confirmation and seal"), names.end());

  // The same run without --time searches the whole space.
  ScriptedEvaluator gpu2(Model);
  gpu2.reported_wall_s = 1.0;
  BuiltinAgent agent2({.seed = 4});
  services.agent = &agent2;
  services.evaluator = &gpu2;
  opts.time_s = 0;
  RunSummary unbounded;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &unbounded, &err)) << err;
  EXPECT_NE(unbounded.stop_reason, StopReason::time);
  EXPECT_GT(unbounded.attempts, summary.attempts);
}

// Profiles that say they took five seconds a config: under --time 3 the best is not profiled
// (its profile would not fit before the confirmation) and the stage says so; without --time it is
// profiled on every config, one request each, unbounded. The profile's cost is what the
// incumbent's took. Under a --time that leaves room, each profile carries the bound of what is left.
TEST(RunStages, TheBestIsProfiledOnlyWhileItsProfileFitsInTheTimeBudget) {
  auto run = [](double time_s, ScriptedEvaluator* gpu, RunSummary* summary, double profile_wall_s = 5.0) {
    LoopFixture fx;
    Store store;
    std::string err;
    ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
    Compiler compiler(TestCompilerOptions(fx.dir));
    gpu->reported_wall_s = 0.01;
    gpu->reported_profile_wall_s = profile_wall_s;
    BuiltinAgent agent({.seed = 4});
    RunServices services{&agent, &compiler, gpu, &store};
    RunOptions opts;
    opts.iterations = 6;
    opts.time_s = time_s;
    opts.ablations = 0;
    ASSERT_TRUE(RunOptimisation(fx.op, opts, services, summary, &err)) << err;
  };
  auto candidate_profiles = [](const ScriptedEvaluator& e) {
    std::vector<std::string> configs;
    for (const ProfileRequest& r : e.profile_requests)
      if (r.kernel.library.empty())
        for (const std::string& c : r.configs) configs.push_back(c);
    return configs;
  };
  auto stage = [](const RunSummary& s, const std::string& name) -> const RunStage* {
    for (const RunStage& st : s.stages)
      if (st.name == name) return &st;
    return nullptr;
  };

  ScriptedEvaluator bounded_gpu(Model);
  RunSummary bounded;
  run(3.0, &bounded_gpu, &bounded);
  ASSERT_EQ(ProfilesOf(bounded_gpu, "scripted.reference"), 1u);
  ASSERT_GT(bounded.best_speedup, 0) << RunSummaryText(bounded);
  const RunStage* analysis = stage(bounded, "analysis of the best");
  ASSERT_NE(analysis, nullptr) << RunSummaryText(bounded);
  EXPECT_EQ(analysis->note, "0 of 2 configs profiled: cut by --time");
  EXPECT_TRUE(candidate_profiles(bounded_gpu).empty());
  EXPECT_NE(stage(bounded, "confirmation and seal"), nullptr) << "the confirmation is never cut";

  ScriptedEvaluator free_gpu(Model);
  RunSummary unbounded;
  run(0, &free_gpu, &unbounded);
  analysis = stage(unbounded, "analysis of the best");
  ASSERT_NE(analysis, nullptr) << RunSummaryText(unbounded);
  EXPECT_EQ(analysis->note, "");
  EXPECT_EQ(candidate_profiles(free_gpu), (std::vector<std::string>{"small", "large"}));
  for (const ProfileRequest& r : free_gpu.profile_requests) EXPECT_EQ(r.bound_s, 0);

  ScriptedEvaluator roomy_gpu(Model);
  RunSummary roomy;
  run(100, &roomy_gpu, &roomy, 0.01);
  EXPECT_EQ(candidate_profiles(roomy_gpu), (std::vector<std::string>{"small", "large"}));
  for (const ProfileRequest& r : roomy_gpu.profile_requests)
    if (r.kernel.library.empty()) {
      EXPECT_GT(r.bound_s, 50);
      EXPECT_LE(r.bound_s, 100);
    }
}

}  // namespace
}  // namespace forgek
