// Tests of the budget split by headroom and of reading headroom from the store.
#include "forgek/run/budget.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {
namespace {

OperatorHeadroom Op(const std::string& name, double sol, int runs_without_gain = 0, bool improved = false) {
  OperatorHeadroom h;
  h.op = name;
  h.sol_pct = sol;
  h.sol_source = "ops bench";
  h.runs_without_gain = runs_without_gain;
  h.improved_last_run = improved;
  return h;
}

double Sum(const std::vector<BudgetShare>& shares) {
  double s = 0;
  for (const BudgetShare& b : shares) s += b.seconds;
  return s;
}

TEST(Budget, OperatorsNearTheSpeedOfLightGetLittle) {
  // gemm at 99% SOL, moe_topk at 10%, layernorm at 86%.
  std::vector<BudgetShare> s = SplitBudget({Op("gemm", 99), Op("moe_topk", 10), Op("layernorm", 86)}, 1000, 60);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(Sum(s), 1000, 1e-6);
  EXPECT_EQ(s[0].op, "gemm");
  // weights 0.02, 0.90, 0.14 of the 820 s above the floors
  EXPECT_NEAR(s[0].seconds, 60 + 820 * 0.02 / 1.06, 1e-6);
  EXPECT_NEAR(s[1].seconds, 60 + 820 * 0.90 / 1.06, 1e-6);
  EXPECT_GT(s[1].seconds, 10 * s[0].seconds);
  EXPECT_GT(s[2].seconds, s[0].seconds);
  EXPECT_EQ(s[0].why, "SOL 99.0% (ops bench): headroom 2.0%");
}

TEST(Budget, AboveTheSpeedOfLightStillGetsItsFloorAndUnknownIsHalf) {
  std::vector<BudgetShare> s = SplitBudget({Op("cross_entropy", 104.3), Op("new_op", -1)}, 300, 30);
  EXPECT_NEAR(s[0].weight, kMinHeadroom, 1e-12);
  EXPECT_NEAR(s[1].weight, 0.5, 1e-12);
  EXPECT_GE(s[0].seconds, 30);
  EXPECT_NEAR(Sum(s), 300, 1e-6);
  EXPECT_NE(s[1].why.find("unknown"), std::string::npos);
}

TEST(Budget, RunsWithoutGainLowerAShareAndARecentGainRaisesIt) {
  std::vector<BudgetShare> s =
      SplitBudget({Op("stale", 50, 4), Op("fresh", 50, 0), Op("improving", 50, 0, true)}, 700, 0);
  EXPECT_NEAR(s[0].weight, 0.5 / 3, 1e-12);
  EXPECT_NEAR(s[1].weight, 0.5, 1e-12);
  EXPECT_NEAR(s[2].weight, 0.75, 1e-12);
  EXPECT_LT(s[0].seconds, s[1].seconds);
  EXPECT_LT(s[1].seconds, s[2].seconds);
  EXPECT_NE(s[0].why.find("4 runs without gain"), std::string::npos) << s[0].why;
}

TEST(Budget, TooSmallATotalIsSplitEqually) {
  std::vector<BudgetShare> s = SplitBudget({Op("a", 99), Op("b", 10)}, 50, 60);
  EXPECT_NEAR(s[0].seconds, 25, 1e-9);
  EXPECT_NEAR(s[1].seconds, 25, 1e-9);
  EXPECT_TRUE(SplitBudget({}, 100, 10).empty());
}

TEST(Budget, HeadroomComesFromTheLatestSealAndTheRunHistory) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  OperatorHeadroom h;
  ASSERT_TRUE(HeadroomFromStore(store, "softmax", "sm90", 80, &h, &err)) << err;
  EXPECT_DOUBLE_EQ(h.sol_pct, 80) << "an empty store falls back to ops bench";
  EXPECT_EQ(h.sol_source, "ops bench");
  EXPECT_EQ(h.runs_without_gain, 0);

  ASSERT_TRUE(store.UpsertOperator({"softmax", "normalization", ""}, &err)) << err;
  int minute = 0;  // runs a minute apart: the store orders them by their start
  auto run = [&](const std::string& seal) {
    RunRecord r;
    char at[32];
    std::snprintf(at, sizeof at, "2026-12-01T10:%02d:00Z", minute++);
    r.created_at = at;
    r.operator_name = "softmax";
    r.arch = "sm90";
    r.agent = "builtin";
    ASSERT_TRUE(store.AddRun(&r, &err)) << err;
    nlohmann::json j = {{"seal", seal.empty() ? nlohmann::json(nullptr) : nlohmann::json(seal)}};
    ASSERT_TRUE(store.FinishRun(r.id, "finished", j.dump(), &err)) << err;
  };
  run("");
  CandidateRecord cand{"c1", "softmax", "src", "{}", "", {}};
  bool inserted = false;
  ASSERT_TRUE(store.PutCandidate(cand, &inserted, &err)) << err;
  SealRecord seal;
  seal.id = "seal1";
  seal.operator_name = "softmax";
  seal.arch = "sm90";
  seal.candidate_hash = "c1";
  seal.metadata_json = nlohmann::json{{"configs", {{{"config", "a"}, {"sol_pct", 90.0}}, {{"config", "b"}, {"sol_pct", 40.0}}}}}.dump();
  ASSERT_TRUE(store.AddSeal(seal, &err)) << err;
  run("seal1");
  ASSERT_TRUE(HeadroomFromStore(store, "softmax", "sm90", 80, &h, &err)) << err;
  EXPECT_NEAR(h.sol_pct, 60, 1e-9) << "the geomean of the seal's configs";
  EXPECT_EQ(h.sol_source, "seal seal1");
  EXPECT_TRUE(h.improved_last_run);
  EXPECT_EQ(h.runs_without_gain, 0);
  run("");
  run("");
  ASSERT_TRUE(HeadroomFromStore(store, "softmax", "sm90", 80, &h, &err)) << err;
  EXPECT_FALSE(h.improved_last_run);
  EXPECT_EQ(h.runs_without_gain, 2);
}

// Seals `op` on sm90 once (candidate "c1"), the seal's metadata listing `configs`.
bool SealOnce(Store& store, const std::string& op, const std::string& family, const std::string& seal_id,
              const nlohmann::json& configs, std::string* err) {
  CandidateRecord cand{"c1", op, "src", "{}", "", {}};
  bool inserted = false;
  SealRecord seal;
  seal.id = seal_id;
  seal.operator_name = op;
  seal.arch = "sm90";
  seal.candidate_hash = "c1";
  seal.metadata_json = nlohmann::json{{"configs", configs}}.dump();
  return store.UpsertOperator({op, family, ""}, err) && store.PutCandidate(cand, &inserted, err) &&
         store.AddSeal(seal, err);
}

TEST(Budget, ASealWithoutSolFiguresLeavesTheSolUnknown) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  ASSERT_TRUE(SealOnce(store, "softmax", "normalization", "seal1",
                       {{{"config", "a"}, {"sol_pct", 0.0}}, {{"config", "b"}}}, &err))
      << err;
  OperatorHeadroom h;
  ASSERT_TRUE(HeadroomFromStore(store, "softmax", "sm90", -1, &h, &err)) << err;
  EXPECT_LT(h.sol_pct, 0) << "unknown, not 0% of SOL (which would claim all the headroom there is)";
  EXPECT_EQ(h.sol_source, "");
  ASSERT_TRUE(HeadroomFromStore(store, "softmax", "sm90", 80, &h, &err)) << err;
  EXPECT_DOUBLE_EQ(h.sol_pct, 80) << "ops bench fills in";
}

// The split `forgek batch --time` makes before it starts a run, without the GPU probe that comes
// first in the command: headroom from the store and from `ops bench`, then each run's arguments.
TEST(Budget, ABatchSplitsItsTimeByHeadroomFromTheStoreAndOpsBench) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  ASSERT_TRUE(SealOnce(store, "gemm", "gemm", "sealgemm", {{{"config", "a"}, {"sol_pct", 95.0}}}, &err)) << err;

  // ops bench: softmax at 20% (geomean of its rows), gemm at 50% (the store's seal wins), a row
  // without a SOL is left out.
  std::map<std::string, double> bench;
  ASSERT_TRUE(BenchSolFromJson(R"({"rows": [{"operator": "softmax", "sol_pct": 10}, {"operator": "softmax", "sol_pct": 40},
                                            {"operator": "gemm", "sol_pct": 50}, {"operator": "rmsnorm"}]})",
                               &bench, &err))
      << err;
  EXPECT_NEAR(bench.at("softmax"), 20, 1e-9);
  EXPECT_EQ(bench.count("rmsnorm"), 0u);

  std::vector<BudgetShare> shares;
  ASSERT_TRUE(SplitBatchTime(store, {"gemm", "softmax", "rmsnorm"}, "sm90", 900, 100, bench, &shares, &err)) << err;
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].op, "gemm");
  EXPECT_EQ(shares[0].why, "SOL 95.0% (seal sealgemm): headroom 5.0%");
  EXPECT_EQ(shares[1].why, "SOL 20.0% (ops bench): headroom 80.0%");
  EXPECT_NE(shares[2].why.find("unknown"), std::string::npos) << shares[2].why;
  // 600 s above the floors, by weight 0.05 : 0.8 : 0.5.
  EXPECT_NEAR(shares[0].seconds, 100 + 600 * 0.05 / 1.35, 1e-6);
  EXPECT_NEAR(shares[1].seconds, 100 + 600 * 0.8 / 1.35, 1e-6);
  EXPECT_NEAR(Sum(shares), 900, 1e-6);

  // Each run ends by its share: --time in whole seconds and no count, unless a count was given.
  BatchRunBudget softmax = RunBudgetOf(shares, "softmax", 24, false);
  EXPECT_EQ(softmax.time_s, 456);
  EXPECT_EQ(softmax.iterations, 0);
  EXPECT_EQ(RunBudgetOf(shares, "softmax", 24, true).iterations, 24);
  BatchRunBudget untimed = RunBudgetOf({}, "softmax", 24, false);
  EXPECT_EQ(untimed.time_s, 0) << "no --time budget: no split";
  EXPECT_EQ(untimed.iterations, 24);
  EXPECT_EQ(RunBudgetOf({{"tiny", 0.2, 1, ""}}, "tiny", 24, false).time_s, 1) << "never 0 s: that is no budget";

  EXPECT_TRUE(SplitBatchTime(store, {"gemm"}, "sm90", 0, 100, bench, &shares, &err));
  EXPECT_TRUE(shares.empty()) << "no total, no split";
  EXPECT_FALSE(BenchSolFromJson(R"({"rows": [{"operator": 3}]})", &bench, &err));
  EXPECT_EQ(err, "rows[0].operator is not a string");
}

}  // namespace
}  // namespace forgek
