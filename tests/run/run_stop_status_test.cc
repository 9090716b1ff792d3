// How a run that ends because of its agent is recorded: a spent --max-cost / --max-tokens is a
// normal end (finished, exit 0); an agent failure is recorded failed with its reason (exit 1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

// The builtin search for `proposals` calls, then a failed Propose; `budget` is what BudgetSpent
// says after that ("" for a plain failure).
class EndingAgent : public Agent {
 public:
  EndingAgent(int proposals, StopReason budget) : left_(proposals), budget_(budget) {}
  std::string Name() const override { return "ending"; }
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) override {
    if (left_-- > 0) return search_.Propose(ctx, out, err);
    spent_ = budget_;
    *err = budget_ == StopReason::none ? "HTTP 401: authentication failed" : "LLM budget spent: 120 of the 100 token cap";
    return false;
  }
  StopReason BudgetSpent() const override { return spent_; }

 private:
  int left_;
  StopReason budget_;
  StopReason spent_ = StopReason::none;
  BuiltinAgent search_{BuiltinAgentOptions{.seed = 4}};
};

struct StatusRig : LoopFixture {
  Store store;
  Compiler compiler{TestCompilerOptions(dir)};
  ScriptedEvaluator evaluator{Model};
  std::string err;
  StatusRig() {
    op.families = {"families/tiled.cu"};
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  RunSummary Run(Agent* agent) {
    RunServices services{agent, &compiler, &evaluator, &store};
    RunOptions opts;
    opts.iterations = 10;
    opts.batch = 1;
    opts.allow_seal = false;
    RunSummary s;
    EXPECT_TRUE(RunOptimisation(op, opts, services, &s, &err)) << err;
    return s;
  }
  RunRecord Stored(const std::string& id) {
    RunRecord run;
    bool found = false;
    EXPECT_TRUE(store.GetRun(id, &run, &found, &err)) << err;
    EXPECT_TRUE(found);
    return run;
  }
};

TEST(RunStopStatus, ASpentAgentBudgetEndsTheRunNormallyWithTheCapAsStopReason) {
  for (StopReason reason : {StopReason::max_cost, StopReason::max_tokens}) {
    const std::string cap = StopReasonName(reason);
    StatusRig rig;
    EndingAgent agent(2, reason);
    RunSummary s = rig.Run(&agent);
    EXPECT_EQ(s.stop_reason, reason);
    EXPECT_EQ(s.attempts, 2);
    EXPECT_EQ(s.status, "finished");
    EXPECT_EQ(s.error, "");
    EXPECT_EQ(RunExitCode(s), 0);
    EXPECT_NE(RunSummaryText(s).find(std::string("stopped by ") + cap), std::string::npos) << RunSummaryText(s);
    RunRecord run = rig.Stored(s.run_id);
    EXPECT_EQ(run.status, "finished");
    EXPECT_EQ(nlohmann::json::parse(run.summary_json).value("stop_reason", ""), cap) << run.summary_json;
  }
}

TEST(RunStopStatus, AnAgentFailureIsRecordedFailedWithItsReason) {
  StatusRig rig;
  EndingAgent agent(1, StopReason::none);
  RunSummary s = rig.Run(&agent);
  EXPECT_EQ(s.stop_reason, StopReason::agent_failed);
  EXPECT_EQ(s.stop_detail, "HTTP 401: authentication failed");
  EXPECT_EQ(StopReasonText(s), "agent: HTTP 401: authentication failed");
  EXPECT_EQ(s.status, "failed");
  EXPECT_NE(s.error.find("HTTP 401: authentication failed"), std::string::npos) << s.error;
  EXPECT_EQ(RunExitCode(s), 1);
  RunRecord run = rig.Stored(s.run_id);
  EXPECT_EQ(run.status, "failed");
  nlohmann::json summary = nlohmann::json::parse(run.summary_json);
  EXPECT_NE(summary.value("error", "").find("authentication failed"), std::string::npos) << run.summary_json;
}

}  // namespace
}  // namespace forgek
