// Tests of the ranking of earlier runs' results that warm-starts a run.
#include "run/prior_results.h"

#include <gtest/gtest.h>

#include <cmath>

namespace forgek {
namespace {

// A gemm-like operator: two large configs and one skinny one (knowledge/regime.cc's classes).
OperatorSpec GemmLike() {
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.category = "gemm";
  op.params = {"M", "N", "K"};
  op.flops = "2*M*N*K";
  op.configs = {{"4096^3", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
                {"8192^3", {{"M", 8192}, {"N", 8192}, {"K", 8192}}},
                {"M64", {{"M", 64}, {"N", 8192}, {"K", 8192}}}};
  return op;
}

TimedAttempt Past(const std::string& run, int iteration, const std::string& params,
                  std::vector<AttemptMeasurement> measurements) {
  TimedAttempt a;
  a.run_id = run;
  a.iteration = iteration;
  a.family = "families/f.cu";
  a.params_json = params;
  a.geomean_speedup = 1.0;
  a.measurements = std::move(measurements);
  return a;
}

AttemptMeasurement On(const std::string& config, double sol_pct, bool correct = true) {
  AttemptMeasurement m;
  m.config = config;
  m.correct = correct;
  m.sol_pct = sol_pct;
  m.speedup = 1.0;
  return m;
}

TEST(PriorResults, RankedBySolOnConfigsOfTheRunsRegimesOnly) {
  OperatorSpec op = GemmLike();
  std::vector<TimedAttempt> past = {
      Past("runA", 0, R"({"P":1})", {On("4096^3", 60), On("M64", 95)}),  // large 60%
      Past("runA", 1, R"({"P":2})", {On("8192^3", 80)}),                 // large 80%
      Past("runA", 2, R"({"P":3})", {On("M64", 99)}),                    // skinny only
  };
  // A run on the large 4096^3 config learns from large shapes, whichever config they were on.
  std::vector<PriorResult> large = RankPriorResults(op, {"4096^3"}, past, "", 8);
  ASSERT_EQ(large.size(), 2u);
  EXPECT_EQ(large[0].params.at("P"), 2);
  EXPECT_DOUBLE_EQ(large[0].sol_pct, 80);
  EXPECT_EQ(large[1].params.at("P"), 1);
  EXPECT_DOUBLE_EQ(large[1].sol_pct, 60) << "the skinny measurement must not count for a large run";
  EXPECT_NE(large[0].source.find("attempt 2 of run runA on 8192^3"), std::string::npos) << large[0].source;

  // A run on every config uses every regime: geomean over all matching measurements.
  std::vector<PriorResult> all = RankPriorResults(op, {}, past, "", 8);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].params.at("P"), 3);
  EXPECT_NEAR(all[2].sol_pct, std::sqrt(60.0 * 95.0), 1e-9);
}

TEST(PriorResults, SkipsWrongUnknownExcludedAndKeepsTheBestRepeat) {
  OperatorSpec op = GemmLike();
  std::vector<TimedAttempt> past = {
      Past("old", 0, R"({"P":1})", {On("4096^3", 70)}),
      Past("new", 4, R"({"P":1})", {On("4096^3", 75)}),           // same instance measured again: keep 75
      Past("old", 1, R"({"P":2})", {On("4096^3", 90, false)}),    // not correct there
      Past("old", 2, R"({"P":3})", {On("2048^3", 99)}),           // a config the operator no longer has
      Past("resumed", 3, R"({"P":4})", {On("4096^3", 99)}),       // the run being resumed
      Past("old", 5, R"(not json)", {On("4096^3", 99)}),          // unreadable params
      Past("old", 6, R"({"P":5})", {On("4096^3", 50)}),
      Past("old", 7, R"({"P":6})", {On("4096^3", 40)}),
  };
  past[5].family = "families/f.cu";
  std::vector<PriorResult> got = RankPriorResults(op, {"4096^3"}, past, "resumed", 2);
  ASSERT_EQ(got.size(), 2u) << "limit";
  EXPECT_EQ(got[0].params.at("P"), 1);
  EXPECT_DOUBLE_EQ(got[0].sol_pct, 75);
  EXPECT_NE(got[0].source.find("run new"), std::string::npos) << got[0].source;
  EXPECT_EQ(got[1].params.at("P"), 5);
  TimedAttempt free_form = Past("old", 8, R"({"P":7})", {On("4096^3", 99)});
  free_form.family.clear();
  free_form.candidate_hash = "c0ffee";
  TimedAttempt again = free_form;  // the same free-form candidate measured in a second run
  again.run_id = "older";
  again.measurements = {On("4096^3", 90)};
  got = RankPriorResults(op, {"4096^3"}, {free_form, again}, "", 8);
  ASSERT_EQ(got.size(), 1u) << "a free-form candidate is kept once, at its best";
  EXPECT_EQ(got[0].family, "");
  EXPECT_EQ(got[0].candidate_hash, "c0ffee");
  EXPECT_DOUBLE_EQ(got[0].sol_pct, 99);
}

}  // namespace
}  // namespace forgek
