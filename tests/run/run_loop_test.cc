// Tests of the run loop and the sealing logic with a scripted evaluator and real NVRTC compiles.
#include "forgek/run/run.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(RunLoop, SealsAFasterCandidateAndTheNextRunStartsFromIt) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  std::vector<std::string> progress;
  services.progress = [&](const std::string& line) { progress.push_back(line); };
  RunOptions opts;
  opts.iterations = 6;  // the toy space holds 10 instances
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;

  EXPECT_EQ(first.attempts, 6);
  EXPECT_EQ(progress.size(), 6u);
  EXPECT_GE(first.outcomes["compile_error"], 1) << "the broken family must be tried and fail to compile";
  EXPECT_GT(first.best_speedup, 1.1);
  ASSERT_FALSE(first.seal_id.empty()) << first.seal_reason;
  EXPECT_EQ(first.incumbent, "reference (scripted.reference)");
  ASSERT_EQ(first.best_so_far.size(), 6u);
  for (size_t i = 1; i < first.best_so_far.size(); ++i) EXPECT_GE(first.best_so_far[i], first.best_so_far[i - 1]);

  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.LatestSeal("toy", "sm90", &seal, &found, &err)) << err;
  ASSERT_TRUE(found);
  EXPECT_EQ(seal.id, first.seal_id);
  EXPECT_TRUE(seal.parent.empty());
  EXPECT_EQ(seal.config_us.size(), 2u);
  EXPECT_EQ(seal.device, "Scripted GPU");
  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts(first.run_id, &attempts, &err)) << err;
  EXPECT_EQ(attempts.size(), 6u);

  // The second run measures against the seal, not the reference.
  evaluator.requests.clear();
  BuiltinAgent agent2({.seed = 5});
  services.agent = &agent2;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  EXPECT_EQ(second.incumbent.rfind("seal ", 0), 0u) << second.incumbent;
  ASSERT_FALSE(evaluator.requests.empty());
  const EvalRequest& last = evaluator.requests.back();
  EXPECT_TRUE(last.incumbent.library.empty()) << "the incumbent must be the sealed kernel";
  EXPECT_EQ(last.incumbent.params, first.best_params);
  if (!second.seal_id.empty()) {
    SealRecord child;
    ASSERT_TRUE(store.GetSeal(second.seal_id, &child, &found, &err));
    EXPECT_EQ(child.parent, first.seal_id) << "lineage: the new seal descends from the old";
  }
}

TEST(RunLoop, ARunOnAnotherConfigStartsFromTheBestOfTheEarlierRun) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 8;
  opts.configs = {"small"};  // a --config run: nothing sealed, the reference stays the incumbent
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;
  ASSERT_TRUE(first.seal_id.empty());
  ASSERT_FALSE(first.best_params.empty());

  evaluator.requests.clear();
  BuiltinAgent fresh({.seed = 11});
  services.agent = &fresh;
  opts.configs = {"large"};  // the same shape regime ("small" bytes), another config
  opts.iterations = 1;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  ASSERT_EQ(evaluator.requests.size(), 1u);
  EXPECT_EQ(evaluator.requests[0].candidate.params, first.best_params) << "the first attempt re-measures run 1's best";
  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts(second.run_id, &attempts, &err)) << err;
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].rationale.rfind("warm start from attempt ", 0), 0u) << attempts[0].rationale;
  EXPECT_NE(attempts[0].rationale.find(first.run_id.substr(0, 8)), std::string::npos) << attempts[0].rationale;
}

TEST(RunLoop, NothingSealedWhenNoCandidateBeatsTheIncumbent) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator([](const KernelUnderTest& k, const std::string&) { return k.library.empty() ? 120.0 : 100.0; });
  BuiltinAgent agent;
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 4;
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_TRUE(s.seal_id.empty());
  EXPECT_NE(s.seal_reason.find("not sealed"), std::string::npos) << s.seal_reason;
  SealRecord seal;
  bool found = true;
  ASSERT_TRUE(store.LatestSeal("toy", "sm90", &seal, &found, &err));
  EXPECT_FALSE(found);
}

// A confirmation request is the one with one more seed than the search's (RunOptions::seeds = 2).
bool IsConfirmation(const std::vector<EvalRequest>& requests) {
  return !requests.empty() && requests.back().seeds == 3;
}

int Work(const KernelUnderTest& k) { return static_cast<int>(k.params.at("TILE") * k.params.at("UNROLL")); }

TEST(RunLoop, WhenTheBestFailsItsConfirmationTheNextWinnerIsSealed) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  // The fastest instance (TILE*UNROLL = 16) was lucky in the search: re-measured, it regresses on
  // the large config. Every other instance measures the same both times.
  std::vector<EvalRequest>* requests = nullptr;
  ScriptedEvaluator evaluator([&](const KernelUnderTest& k, const std::string& config) {
    if (k.library.empty() && Work(k) == 16 && config == "large" && IsConfirmation(*requests)) return 150.0;
    return Model(k, config);
  });
  requests = &evaluator.requests;
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 10;  // every instance of the toy space
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;

  ASSERT_EQ(s.best_params.at("TILE") * s.best_params.at("UNROLL"), 16) << "the search's best is the lucky one";
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  EXPECT_NE(s.sealed_candidate_hash, s.best_candidate_hash);
  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(s.seal_id, &seal, &found, &err)) << err;
  ASSERT_TRUE(found);
  const nlohmann::json params = nlohmann::json::parse(seal.params_json);
  EXPECT_EQ(params.at("TILE").get<int>() * params.at("UNROLL").get<int>(), 8) << seal.params_json;
  int confirmations = 0;
  for (const EvalRequest& r : evaluator.requests) confirmations += r.seeds == 3;
  EXPECT_EQ(confirmations, 2) << "the best, then the runner-up";
}

TEST(RunLoop, NoSealWhenNoWinnerHoldsItsConfirmation) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  std::vector<EvalRequest>* requests = nullptr;
  ScriptedEvaluator evaluator([&](const KernelUnderTest& k, const std::string& config) {
    if (k.library.empty() && config == "large" && IsConfirmation(*requests)) return 150.0;
    return Model(k, config);
  });
  requests = &evaluator.requests;
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, nullptr};
  RunOptions opts;
  opts.iterations = 10;
  opts.confirm = 2;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_TRUE(s.seal_id.empty());
  EXPECT_NE(s.seal_reason.find("2 candidates faster in the search, none held"), std::string::npos) << s.seal_reason;
  EXPECT_NE(s.seal_reason.find("large regresses"), std::string::npos) << s.seal_reason;
  int confirmations = 0;
  for (const EvalRequest& r : evaluator.requests) confirmations += r.seeds == 3;
  EXPECT_EQ(confirmations, 2) << "--confirm bounds the re-measurements";
}

TEST(RunLoop, PatienceAndInterruptStopEarlyAndResumeContinues) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator([](const KernelUnderTest&, const std::string&) { return 100.0; });
  BuiltinAgent agent;
  std::atomic<int> seen{0};
  RunServices services{&agent, &compiler, &evaluator, &store};
  services.progress = [&](const std::string&) { ++seen; };
  services.stop_requested = [&] { return seen.load() >= 3; };
  RunOptions opts;
  opts.iterations = 20;
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.stop_reason, StopReason::interrupted);
  EXPECT_EQ(s.attempts, 3);

  services.stop_requested = nullptr;
  opts.patience = 2;
  opts.resume_run = s.run_id;
  RunSummary resumed;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &resumed, &err)) << err;
  EXPECT_EQ(resumed.run_id, s.run_id);
  EXPECT_EQ(resumed.stop_reason, StopReason::patience);
  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts(s.run_id, &attempts, &err));
  EXPECT_EQ(static_cast<int>(attempts.size()), s.attempts + resumed.attempts);
}

// An agent whose request waits until the run's end, as an LLM request cut by --time does.
class WaitsForTheBudgetAgent : public Agent {
 public:
  explicit WaitsForTheBudgetAgent(const std::optional<std::chrono::steady_clock::time_point>* end) : end_(end) {}
  std::string Name() const override { return "waits"; }
  bool Propose(const ProposalContext&, std::vector<Proposal>*, std::string* err) override {
    if (!end_->has_value()) {
      *err = "no deadline was given";
      return false;
    }
    std::this_thread::sleep_until(**end_);
    *err = "POST http://127.0.0.1/x: cut at the run's time budget";
    return false;
  }

 private:
  const std::optional<std::chrono::steady_clock::time_point>* end_;
};

TEST(RunLoop, AnAgentCutByTheTimeBudgetEndsTheRunOnTimeNotAsAFailure) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  std::optional<std::chrono::steady_clock::time_point> end;
  WaitsForTheBudgetAgent agent(&end);
  RunServices services{&agent, &compiler, nullptr, nullptr};
  services.budget_ends = [&end](std::optional<std::chrono::steady_clock::time_point> e) { end = e; };
  RunOptions opts;
  opts.compile_only = true;
  opts.time_s = 0.3;
  RunSummary s;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.stop_reason, StopReason::time);
  ASSERT_TRUE(end.has_value());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

// A --time shorter than the incumbent's analysis (seen in `batch --all` with a few seconds per
// operator) still gives the run its first attempt, so it reports something about the operator.
TEST(RunLoop, ARunWhoseTimeWentIntoItsStartStillMakesAnAttempt) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  BuiltinAgent agent;
  RunServices services{&agent, &compiler, nullptr, nullptr};
  RunOptions opts;
  opts.compile_only = true;
  opts.iterations = 0;
  opts.time_s = 1e-9;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.stop_reason, StopReason::time);
  EXPECT_EQ(s.attempts, 1) << "the first attempt, and no more once the budget is known to be spent";
}

TEST(RunLoop, CompileOnlyNeedsNoEvaluator) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  BuiltinAgent agent;
  RunServices services{&agent, &compiler, nullptr, nullptr};
  std::vector<std::string> lines;
  services.progress = [&](const std::string& line) { lines.push_back(line); };
  RunOptions opts;
  opts.iterations = 4;
  opts.compile_only = true;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.attempts, 4);
  EXPECT_GE(s.outcomes["compiled"], 1);
  EXPECT_GE(s.outcomes["compile_error"], 1);
  EXPECT_TRUE(s.seal_id.empty());
  // Nothing was timed: a progress line says compiled or compile_error, and no speedup or best.
  ASSERT_EQ(lines.size(), 4u);
  int compiled = 0, failed = 0;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("best"), std::string::npos) << line;
    EXPECT_EQ(line.find("0.000x"), std::string::npos) << line;
    compiled += line.find("| compiled |") != std::string::npos;
    failed += line.find("| compile_error |") != std::string::npos;
  }
  EXPECT_EQ(compiled + failed, 4) << lines[0];

  opts.compile_only = false;
  EXPECT_FALSE(RunOptimisation(fx.op, opts, services, &s, &err));
  EXPECT_NE(err.find("--compile-only"), std::string::npos) << err;
}

TEST(RunLoop, SeveralGpusShareTheBatchAndEachTimesAgainstItsOwnIncumbent) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator gpu0(Model), gpu1(Model), gpu2(Model);
  BuiltinAgent agent({.seed = 9});
  RunServices services{&agent, &compiler, &gpu0, &store};
  services.more_evaluators = {&gpu1, &gpu2};
  RunOptions opts;
  opts.iterations = 8;  // inside the toy space of 10 instances
  opts.batch = 4;
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.attempts, 8);
  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts(s.run_id, &attempts, &err)) << err;
  EXPECT_EQ(attempts.size(), 8u);
  std::set<int> iterations;
  for (const AttemptRecord& a : attempts) iterations.insert(a.iteration);
  EXPECT_EQ(iterations.size(), 8u) << "every attempt is recorded once, with its own iteration";
  // Candidates went to more than one GPU; every request carried the incumbent with it, so each
  // GPU timed the candidate against the incumbent itself.
  size_t candidates1 = gpu1.requests.size() + gpu2.requests.size();
  EXPECT_GT(candidates1, 0u) << "the extra GPUs evaluated nothing";
  for (ScriptedEvaluator* g : {&gpu0, &gpu1, &gpu2})
    for (const EvalRequest& r : g->requests) EXPECT_EQ(r.incumbent.library, "scripted.reference");
}

}  // namespace
}  // namespace forgek

namespace forgek {
namespace {

// A run that loses its knowledge folder and the incumbent's profile goes on, and says so: the
// summary text and --json name each degraded stage with its reason.
TEST(RunLoop, ADegradedRunSaysWhichStagesDegradedAndWhy) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  evaluator.profile_error = "config small: CUPTI is not available";
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 2;
  opts.allow_seal = false;
  const char* before = std::getenv("FORGEK_KNOWLEDGE");
  const std::string saved = before ? before : "";
  setenv("FORGEK_KNOWLEDGE", fx.dir.file("no-such-knowledge").c_str(), 1);
  RunSummary summary;
  const bool ok = RunOptimisation(fx.op, opts, services, &summary, &err);
  if (before) setenv("FORGEK_KNOWLEDGE", saved.c_str(), 1); else unsetenv("FORGEK_KNOWLEDGE");
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(summary.attempts, 2) << "a degraded run still runs";

  std::map<std::string, std::string> stages;
  for (const DegradedStage& d : summary.degraded) stages[d.stage] = d.reason;
  ASSERT_TRUE(stages.count("knowledge")) << RunSummaryText(summary);
  EXPECT_NE(stages["knowledge"].find("no knowledge/ folder"), std::string::npos) << stages["knowledge"];
  ASSERT_TRUE(stages.count("profile")) << RunSummaryText(summary);
  EXPECT_NE(stages["profile"].find("CUPTI is not available"), std::string::npos) << stages["profile"];

  const std::string text = RunSummaryText(summary);
  EXPECT_NE(text.find("degraded:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  profile: incumbent not profiled: config small: CUPTI is not available\n"), std::string::npos)
      << text;
  nlohmann::json j = nlohmann::json::parse(RunSummaryJson(summary));
  ASSERT_TRUE(j["degraded"].is_array());
  bool knowledge = false, profile = false;
  for (const nlohmann::json& d : j["degraded"]) {
    knowledge |= d.value("stage", "") == "knowledge" && !d.value("reason", "").empty();
    profile |= d.value("stage", "") == "profile" && d.value("reason", "").find("CUPTI") != std::string::npos;
  }
  EXPECT_TRUE(knowledge && profile) << j["degraded"].dump();
}

TEST(RunLoop, AHealthyRunHasNoDegradedStage) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 1;
  opts.allow_seal = false;
  RunSummary summary;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &summary, &err)) << err;
  // The broken family compiles badly but loads; the shipped knowledge folder is found.
  EXPECT_TRUE(summary.degraded.empty()) << RunSummaryText(summary);
  EXPECT_EQ(RunSummaryText(summary).find("degraded:"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(RunSummaryJson(summary))["degraded"].empty());
}

}  // namespace
}  // namespace forgek
