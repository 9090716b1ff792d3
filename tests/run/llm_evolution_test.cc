// The llm agent evolving its own kernels in the run loop, against a scripted model and a
// scripted evaluator with real NVRTC compiles: parents, feedback turns, families the search
// tunes, families kept for later runs, replay and cost caps.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "agent/llm_test_util.h"
#include "agent/scripted_model.h"
#include "forgek/agent/builtin_agent.h"
#include "forgek/agent/llm.h"
#include "forgek/core/params.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "scripted_evaluator.h"
#include "test_util.h"
#include "toy_operator.h"

namespace forgek {
namespace {

using testing::ScriptedModel;

const char* kGolden = R"CU(/* forgek
{ "name": "golden", "launches": [{"kernel": "golden", "grid": ["ceil_div(N, 128)"], "block": [128], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void golden(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i];
}
)CU";
const char* kOwnFamily = R"CU(/* forgek
{ "name": "strided", "mechanisms": ["vector_16B"], "params": {"STRIDE": [1, 2]},
  "launches": [{"kernel": "strided", "grid": ["ceil_div(N, 256*STRIDE)"], "block": [256], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void strided(const float* x, float* y, int N) {
  for (int s = 0; s < STRIDE; ++s) {
    int i = (blockIdx.x * STRIDE + s) * 256 + threadIdx.x;
    if (i < N) y[i] = x[i];
  }
}
)CU";

// The reference takes 100 us; the block size decides the copy kernel's time (best at 512).
double Model(const KernelUnderTest& k, const std::string&) {
  if (!k.library.empty()) return 100.0;
  static const std::map<int64_t, double> kTimes = {{32, 120}, {64, 100}, {128, 80}, {256, 60}, {512, 50}, {1024, 90}};
  auto block = k.params.find("BLOCK");
  if (block == k.params.end()) return 95.0;  // the operator's own family
  auto t = kTimes.find(block->second);
  return t == kTimes.end() ? 100.0 : t->second;
}

struct EvolutionFixture {
  TempDir dir;
  OperatorSpec op;
  testing::FakeLlmServer server;
  ScriptedModel model;
  Store store;
  CompilerOptions copts;
  EvolutionFixture() {
    WriteFile(dir.file("toy/families/strided.cu"), kOwnFamily);
    WriteFile(dir.file("toy/golden.cu"), kGolden);
    op = ToyOperator(dir.file("toy"), {"families/strided.cu"});
    server.SetFallback([this](const testing::ReceivedRequest& r, int i) { return model(r, i); });
    copts.cache_dir = dir.file("cache");
    copts.threads = 2;
    std::string err;
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  LlmOptions Options() {
    LlmOptions o = testing::TestOptions(LlmProviderKind::openai, server, dir);
    o.max_in_flight = 1;
    return o;
  }
};

struct Ran {
  RunSummary summary;
  std::vector<AttemptRecord> attempts;
  std::vector<CandidateRecord> candidates;
};

// The same GPU on another day: BLOCK 512 lost its edge, so a search would now pick otherwise.
double OtherDayModel(const KernelUnderTest& k, const std::string& config) {
  auto block = k.params.find("BLOCK");
  return block != k.params.end() && block->second == 512 ? 99.0 : Model(k, config);
}

Ran RunWith(EvolutionFixture& fx, Agent& agent, int iterations, int batch, Store* store, TimeModel model = Model) {
  Ran ran;
  Compiler compiler(fx.copts);
  ScriptedEvaluator evaluator(model);
  RunServices services{&agent, &compiler, &evaluator, store};
  RunOptions opts;
  opts.iterations = iterations;
  opts.batch = batch;
  std::string err;
  EXPECT_TRUE(RunOptimisation(fx.op, opts, services, &ran.summary, &err)) << err;
  if (store) {
    EXPECT_TRUE(store->ListAttempts(ran.summary.run_id, &ran.attempts, &err)) << err;
    for (const AttemptRecord& a : ran.attempts) {
      CandidateRecord c;
      bool found = false;
      EXPECT_TRUE(store->GetCandidate(a.candidate_hash, &c, &found, &err)) << err;
      ran.candidates.push_back(c);
    }
  }
  return ran;
}

std::string LastUser(const testing::ReceivedRequest& r) { return testing::LastMessage(r.body); }

TEST(LlmEvolution, CompileErrorLineIsFixedThenFeedbackAndParentsImproveTheKernel) {
  EvolutionFixture fx;
  LlmOptions o = fx.Options();
  o.tune_share = 0;
  std::string err;
  auto agent = LlmAgent::Create(o, nullptr, &err);
  ASSERT_TRUE(agent) << err;
  Ran ran = RunWith(fx, *agent, 7, 1, &fx.store);
  ASSERT_EQ(ran.attempts.size(), 7u);

  // Attempt 0 fails on line 7; the repair turn names the line and the fix compiles.
  EXPECT_EQ(ran.attempts[0].outcome, Outcome::compile_error);
  auto requests = fx.server.requests();
  ASSERT_GE(requests.size(), 7u);
  EXPECT_NE(LastUser(requests[1]).find("line 7:"), std::string::npos) << LastUser(requests[1]);
  EXPECT_EQ(ran.attempts[1].outcome, Outcome::same) << ran.attempts[1].detail;
  EXPECT_NE(ran.attempts[1].rationale.find("Fixed line 7"), std::string::npos);

  // Feedback turns: the times against the incumbent reach the model, which changes BLOCK.
  EXPECT_NE(LastUser(requests[2]).find("| small | 100.00 | 100.00 | 1.000x"), std::string::npos)
      << LastUser(requests[2]);
  EXPECT_EQ(ran.attempts[2].outcome, Outcome::faster);  // BLOCK 128
  EXPECT_NE(LastUser(requests[3]).find("Its profile (a new best is profiled): "), std::string::npos)
      << "a new best's own profile reaches the model: " << LastUser(requests[3]);
  // After max_feedback_turns (4) the conversation ends; a fresh request carries the best parent.
  std::string fresh = LastUser(requests[5]);
  EXPECT_NE(fresh.find("### Parent A: attempt 5 of this run"), std::string::npos) << fresh;
  EXPECT_NE(fresh.find("BLOCK\": 512"), std::string::npos) << "the parent's source is shown";
  EXPECT_NE(fresh.find("| large | 50.00 | 100.00 | 2.000x"), std::string::npos) << "its per-config times";

  // The lineage runs from the first correct kernel to the best, through the feedback turns.
  const RunSummary& s = ran.summary;
  EXPECT_DOUBLE_EQ(s.best_speedup, 2.0);
  ASSERT_GE(s.lineage.size(), 3u);
  EXPECT_EQ(s.lineage.back().iteration, s.best_iteration);
  EXPECT_EQ(s.lineage.front().iteration, 0) << "the broken first kernel is the root";
  for (size_t i = 1; i < s.lineage.size(); ++i) EXPECT_EQ(s.lineage[i].parent_iteration, s.lineage[i - 1].iteration);
  EXPECT_NE(RunSummaryText(s).find("lineage of the best"), std::string::npos);
  EXPECT_NE(RunSummaryText(s).find("-> attempt 5 faster 2.000x (+20.0%): BLOCK 256 -> 512"), std::string::npos)
      << RunSummaryText(s);

  // Costs: every request is counted; per attempt and per improvement; kept in the store.
  EXPECT_EQ(s.spend.requests, static_cast<int64_t>(requests.size()));
  EXPECT_NEAR(s.spend.cost_usd, requests.size() * (1000 * 2 + 500 * 10) / 1e6, 1e-9);
  EXPECT_NEAR(s.cost_per_attempt, s.spend.cost_usd / 7, 1e-12);
  EXPECT_GE(s.improvements, 3);
  EXPECT_NEAR(s.cost_per_improvement, s.spend.cost_usd / s.improvements, 1e-12);
  RunRecord run;
  bool found = false;
  ASSERT_TRUE(fx.store.GetRun(s.run_id, &run, &found, &err)) << err;
  auto stored = nlohmann::json::parse(run.summary_json);
  EXPECT_NEAR(stored["llm"]["cost_usd"].get<double>(), s.spend.cost_usd, 1e-12);
  EXPECT_EQ(stored["llm"]["attempts"].size(), 7u);
  auto json = nlohmann::json::parse(RunSummaryJson(s));
  EXPECT_EQ(json["llm"]["requests"].get<int64_t>(), s.spend.requests);
  EXPECT_EQ(json["lineage"].size(), s.lineage.size());
}

TEST(LlmEvolution, AFamilyIsTunedWithinTheShareAndOfferedToALaterBuiltinRun) {
  EvolutionFixture fx;
  fx.model.family_first = true;
  LlmOptions o = fx.Options();
  o.tune_share = 0.5;
  testing::VectorRecorder recorder;
  std::string err;
  auto agent = LlmAgent::Create(o, &recorder, &err);
  ASSERT_TRUE(agent) << err;
  Ran ran = RunWith(fx, *agent, 8, 2, &fx.store);
  ASSERT_EQ(ran.attempts.size(), 8u);

  std::set<int64_t> blocks;
  int tuned = 0, of_family = 0;
  std::string family;
  for (size_t i = 0; i < ran.attempts.size(); ++i) {
    const CandidateRecord& c = ran.candidates[i];
    if (c.family.rfind("llm/", 0) != 0) continue;
    family = c.family;
    ++of_family;
    ParamAssignment params;
    ASSERT_TRUE(ParseParamsJson(c.params_json, &params, &err)) << err;
    blocks.insert(params.at("BLOCK"));
    if (ran.attempts[i].rationale.rfind("search of the model's family", 0) == 0) ++tuned;
  }
  EXPECT_GE(blocks.size(), 3u) << "distinct instances of the model's family were compiled and timed";
  EXPECT_GE(tuned, 2);
  EXPECT_LE(tuned, 4) << "tuning stays within --tune-share of the 8 attempts";
  EXPECT_GT(of_family, tuned);

  // The family won (faster): a later run of the builtin agent searches it as one of its families.
  BuiltinAgent builtin({.seed = 3});
  Ran later = RunWith(fx, builtin, 4, 2, &fx.store);
  bool searched = false;
  for (const CandidateRecord& c : later.candidates) searched = searched || c.family == family;
  EXPECT_TRUE(searched) << "family " << family << " was not offered to the builtin agent";

  // Replay of the first run (a fresh store, as it began) proposes every candidate again, the
  // search's instances included (recorded as tuning rounds), even when the times differ.
  EXPECT_TRUE(std::any_of(recorder.exchanges.begin(), recorder.exchanges.end(),
                          [](const LlmExchange& x) { return x.purpose == "tune" && x.cost_usd == 0; }));
  EvolutionFixture again;
  again.model.family_first = true;
  LlmOptions ro = again.Options();
  ro.tune_share = 0.5;
  auto replay = ReplayAgent::Create(ro, recorder.exchanges, nullptr, &err);
  ASSERT_TRUE(replay) << err;
  Ran replayed = RunWith(again, *replay, 8, 2, &again.store, OtherDayModel);
  ASSERT_EQ(replayed.attempts.size(), ran.attempts.size());
  for (size_t i = 0; i < ran.attempts.size(); ++i)
    EXPECT_EQ(replayed.attempts[i].candidate_hash, ran.attempts[i].candidate_hash) << "attempt " << i;
  EXPECT_EQ(replay->Remaining(), 0u);
  EXPECT_TRUE(again.server.requests().empty()) << "replay sends nothing";
}

TEST(LlmEvolution, TheCostCapHoldsWithFeedbackTurns) {
  EvolutionFixture fx;
  LlmOptions o = fx.Options();
  o.tune_share = 0;
  o.max_cost_usd = 0.02;  // each request costs $0.007
  std::string err;
  auto agent = LlmAgent::Create(o, nullptr, &err);
  ASSERT_TRUE(agent) << err;
  Ran ran = RunWith(fx, *agent, 10, 1, &fx.store);
  EXPECT_EQ(fx.server.requests().size(), 3u) << "the third request reaches $0.021; no fourth is sent";
  EXPECT_EQ(ran.summary.spend.requests, 3);
  EXPECT_EQ(ran.summary.stop_reason, StopReason::max_cost) << "a spent budget is a normal end, like --time";
  EXPECT_EQ(ran.summary.status, "finished");
  EXPECT_EQ(RunExitCode(ran.summary), 0);
  EXPECT_EQ(ran.attempts.size(), 3u);
}

}  // namespace
}  // namespace forgek
