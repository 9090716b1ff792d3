// A run resumed with --resume offers its agent the same parents as the run would have offered had
// it never stopped: the restored attempts carry their sources, times, mechanisms and analyses.
#include <gtest/gtest.h>

#include "agent/llm_parents.h"
#include "forgek/core/params.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_agent.h"
#include "scripted_evaluator.h"

namespace forgek {
namespace {

// Every field of a parent, as one line (the source and the analysis in full).
std::string Describe(const ParentProgram& p) {
  std::string out = p.hash + " | " + p.label + " | " + (p.this_run ? "this run" : "earlier run") + " | " + p.family +
                    " | " + ParamsJson(p.params) + " | " + p.outcome + " | " + std::to_string(p.geomean_speedup) +
                    " | SOL " + std::to_string(p.sol_pct) + " | " + p.architecture + "\n";
  for (const ConfigTime& c : p.configs)
    out += "  " + c.config + " " + std::to_string(c.candidate_us) + " vs " + std::to_string(c.incumbent_us) + " SOL " +
           std::to_string(c.sol_pct) + " " + c.verdict + "\n";
  return out + "profile: " + p.bottleneck + "\nsource:\n" + p.source;
}

struct Session {
  RunSummary summary;
  std::vector<std::vector<std::string>> offered;  // per call of the agent, its parent population
};

// A run of `script` (one instance a round) on the fixture's store; `resume`: the run to continue.
Session RunSession(LoopFixture& fx, Store& store, std::vector<ParamAssignment> script, int iterations,
            const std::string& resume = "") {
  Candidate family;
  Diagnostics diags;
  EXPECT_TRUE(LoadCandidateFile(fx.dir.file("toy/families/tiled.cu"), &family, &diags)) << FormatDiagnostics(diags);
  ScriptedAgent agent(family, "families/tiled.cu", std::move(script));
  agent.wants_profiles = true;  // as the llm agent: new bests are profiled and their analysis shown
  Session s;
  agent.seen = [&](const ProposalContext& ctx) {
    std::vector<std::string> parents;
    for (const ParentProgram& p : ParentPopulation(ctx)) parents.push_back(Describe(p));
    s.offered.push_back(std::move(parents));
  };
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = iterations;
  opts.batch = 1;
  opts.allow_seal = false;  // the resumed run measures against the same incumbent
  opts.ablations = 0;
  opts.resume_run = resume;
  std::string err;
  EXPECT_TRUE(RunOptimisation(fx.op, opts, services, &s.summary, &err)) << err;
  return s;
}

TEST(ResumeParents, AResumedRunOffersTheParentsOfAnUnbrokenOne) {
  // TILE*UNROLL makes an instance faster: attempts 1, 2 and 4 are new bests (profiled), 3 is not.
  const std::vector<ParamAssignment> script = {{{"TILE", 1}, {"UNROLL", 1}},
                                               {{"TILE", 4}, {"UNROLL", 1}},
                                               {{"TILE", 2}, {"UNROLL", 1}},
                                               {{"TILE", 8}, {"UNROLL", 1}},
                                               {{"TILE", 8}, {"UNROLL", 2}}};
  std::string err;
  LoopFixture unbroken_fx;
  Store unbroken_store;
  ASSERT_TRUE(unbroken_store.Open(unbroken_fx.dir.file("store.db"), &err)) << err;
  Session unbroken = RunSession(unbroken_fx, unbroken_store, script, 5);
  ASSERT_EQ(unbroken.offered.size(), 5u);
  const std::vector<std::string>& expected = unbroken.offered[4];  // after 4 attempts
  ASSERT_EQ(expected.size(), 4u);

  // The same attempts in a run that stops after 2 and is resumed for 3 more.
  LoopFixture fx;
  Store store;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Session first = RunSession(fx, store, {script[0], script[1]}, 2);
  ASSERT_EQ(first.summary.attempts, 2);
  Session resumed = RunSession(fx, store, {script[2], script[3], script[4]}, 3, first.summary.run_id);
  EXPECT_EQ(resumed.summary.run_id, first.summary.run_id);
  for (const DegradedStage& d : resumed.summary.degraded) EXPECT_NE(d.stage, "resume") << d.reason;
  ASSERT_EQ(resumed.offered.size(), 3u);
  const std::vector<std::string>& got = resumed.offered[2];  // after the same 4 attempts
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "parent " << i;
  // The restored attempts are the run's own: their analyses are shown, as they were before.
  EXPECT_NE(got.back().find("attempt 1 of this run"), std::string::npos) << got.back();
  EXPECT_EQ(got.back().find("profile: \n"), std::string::npos) << "attempt 1 was a new best: its analysis is shown";
}

}  // namespace
}  // namespace forgek
