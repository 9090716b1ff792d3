// Tests of the report's data from a fixture store: per config and operator, runs and convergence,
// seals on the roofline, the nightly history, knowledge over time, and the selections.
#include "forgek/report/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "report/report_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

class ReportBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("store.db");
    ASSERT_TRUE(report_fixture::MakeStore(path_, &ids_, &err_)) << err_;
    ASSERT_TRUE(store_.Open(path_, &err_, StoreMode::read_only)) << err_;
  }
  Report Build(const ReportSelection& sel) {
    Report r;
    EXPECT_TRUE(BuildReport(store_, sel, report_fixture::Specs(), &r, &err_)) << err_;
    return r;
  }
  const ConfigRow* Row(const Report& r, const std::string& op, const std::string& config) {
    for (const ConfigRow& c : r.configs)
      if (c.op == op && c.config == config) return &c;
    return nullptr;
  }

  TempDir dir_;
  std::string path_, err_;
  report_fixture::Ids ids_;
  Store store_;
};

TEST_F(ReportBuild, EachConfigHasTheExpertTheSealServingItAndTheBestAttempt) {
  Report r = Build({});
  EXPECT_EQ(r.scope, "the whole store");
  EXPECT_FALSE(r.Empty());
  ASSERT_EQ(r.configs.size(), 3u);
  // In the operator's config order, not the order of names.
  EXPECT_EQ(r.configs[0].config, "small");
  EXPECT_EQ(r.configs[1].config, "large");
  const ConfigRow* small = Row(r, report_fixture::kSoftmax, "small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->arch, "sm90");
  EXPECT_NEAR(small->expert_us, 10.1, 1e-9) << "the nightly check measured the expert last";
  EXPECT_NEAR(small->sealed_us, 7.1, 1e-9);
  EXPECT_NEAR(small->sealed_noise, 0.015, 1e-9);
  EXPECT_NEAR(small->best_us, 7, 1e-9) << "attempt 4 of run 1";
  EXPECT_NEAR(small->best_noise, 0.03, 1e-9);
  EXPECT_NEAR(small->speedup, 10.1 / 7.1, 1e-9);
  EXPECT_NEAR(small->sol_pct, 39.5, 1e-9) << "the seal's own SOL %";
  EXPECT_NEAR(small->floor_us, 2.5, 1e-9) << "the device's launch floor";
  EXPECT_EQ(small->attempts, 4) << "three timed attempts of run 1 and one of run 2";
  EXPECT_EQ(small->seal, ids_.seal);
  EXPECT_EQ(small->kernel, std::string(report_fixture::kHostileFamily) + " VEC=4");
  EXPECT_EQ(small->mechanisms, (std::vector<std::string>{"vector_16B", report_fixture::kHostileMechanism}));

  const ConfigRow* gemm = Row(r, report_fixture::kGemm, "1024^3");
  ASSERT_NE(gemm, nullptr);
  EXPECT_NEAR(gemm->expert_us, 120, 1e-9);
  EXPECT_NEAR(gemm->sealed_us, 120, 1e-9) << "nothing sealed: the expert serves it";
  EXPECT_NEAR(gemm->best_us, 100, 1e-9) << "the impossible time of a wrong attempt never counts";
  EXPECT_EQ(gemm->attempts, 1);
  EXPECT_EQ(gemm->kernel, "expert reference");
  EXPECT_TRUE(gemm->seal.empty());
  EXPECT_EQ(gemm->note, "not sealed: --no-seal");
  // SOL % of the expert from the bound the attempt's SOL % implies: 70 % at 100 us is a 70 us bound.
  EXPECT_NEAR(gemm->sol_pct, 70.0 / 120 * 100, 1e-9);
}

TEST_F(ReportBuild, OperatorsCountAttemptsAndSpend) {
  Report r = Build({});
  ASSERT_EQ(r.operators.size(), 2u);
  const OperatorRow& softmax = r.operators[0].op == report_fixture::kSoftmax ? r.operators[0] : r.operators[1];
  EXPECT_EQ(softmax.runs, 2);
  EXPECT_EQ(softmax.attempts, 5);
  EXPECT_EQ(softmax.timed_attempts, 4);
  EXPECT_NEAR(softmax.cost_usd, 0.25, 1e-12);
  EXPECT_EQ(softmax.tokens, 1200);
  EXPECT_EQ(softmax.seal, ids_.seal);
  EXPECT_NEAR(softmax.speedup, std::sqrt(10.1 / 7.1 * 50.2 / 38.5), 1e-9);
}

TEST_F(ReportBuild, RunsAreOldestFirstWithTheirConvergence) {
  Report r = Build({});
  ASSERT_EQ(r.runs.size(), 3u);
  const RunSeries& run1 = r.runs[0];
  EXPECT_EQ(run1.id, ids_.run1);
  EXPECT_EQ(run1.seal, ids_.seal);
  EXPECT_EQ(run1.attempts, 4);
  std::vector<std::string> configs = run1.configs;
  std::sort(configs.begin(), configs.end());
  EXPECT_EQ(configs, (std::vector<std::string>{"large", "small"}));
  ASSERT_EQ(run1.points.size(), 3u) << "the attempt that did not compile has no time";
  EXPECT_EQ(run1.points[0].attempt, 1);
  EXPECT_EQ(run1.points[2].attempt, 4);
  EXPECT_NEAR(run1.points[0].us, std::sqrt(8.0 * 40), 1e-9);
  EXPECT_NEAR(run1.points[1].best_us, std::sqrt(8.0 * 40), 1e-9) << "a slower attempt keeps the best";
  EXPECT_NEAR(run1.points[2].best_us, std::sqrt(7.0 * 38), 1e-9);
  EXPECT_NEAR(run1.incumbent_us, std::sqrt(10.0 * 50), 1e-9);
  EXPECT_NEAR(r.runs[1].cost_usd, 0.25, 1e-12);
  EXPECT_EQ(r.runs[1].incumbent, ids_.seal);
}

TEST_F(ReportBuild, ASealIsOnTheRooflineUnderItsDevicesBounds) {
  Report r = Build({});
  ASSERT_EQ(r.seals.size(), 1u);
  const SealSummary& s = r.seals[0];
  EXPECT_EQ(s.compute_dtype, "f32");
  ASSERT_EQ(s.roofline.size(), 2u);
  EXPECT_EQ(s.roofline[0].config, "small");
  EXPECT_NEAR(s.roofline[0].intensity, 5.0 / 8, 1e-12);
  EXPECT_NEAR(s.roofline[0].tflops, 5.0 * 1024 / 7.1 / 1e6, 1e-12);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, report_fixture::kDevice);
  EXPECT_NEAR(r.devices[0].bandwidth_gbps, 4800, 1e-9);
  ASSERT_EQ(r.devices[0].ceilings.size(), 1u);
  EXPECT_EQ(r.devices[0].ceilings[0].dtype, "f32");
  EXPECT_NEAR(r.devices[0].ceilings[0].tflops, 494, 1e-9) << "fp32 is bounded by the tf32 tensor peak";
}

TEST_F(ReportBuild, WithoutTheOperatorsFolderASealHasNoRooflineAndSaysWhy) {
  Report r;
  ASSERT_TRUE(BuildReport(store_, {}, {}, &r, &err_)) << err_;
  ASSERT_EQ(r.seals.size(), 1u);
  EXPECT_TRUE(r.seals[0].roofline.empty());
  EXPECT_NE(r.seals[0].note.find("no operator folder"), std::string::npos) << r.seals[0].note;
  EXPECT_TRUE(r.devices.empty());
}

TEST_F(ReportBuild, TheNightlyHistoryIsPerSealOldestFirst) {
  Report r = Build({});
  ASSERT_EQ(r.nightly.size(), 1u);
  EXPECT_EQ(r.nightly[0].seal_id, ids_.seal);
  ASSERT_EQ(r.nightly[0].checks.size(), 5u);
  EXPECT_EQ(r.nightly[0].checks[0].checked_at, "2026-03-05T02:00:00Z");
  EXPECT_EQ(r.nightly[0].checks[4].result, "skipped");
}

TEST_F(ReportBuild, KnowledgeCountsTheDecisionsEachRunBearsOn) {
  Report r = Build({});
  std::vector<DecisionRecord> decisions;
  ASSERT_TRUE(store_.ListDecisions({}, &decisions, &err_)) << err_;
  ASSERT_EQ(decisions.size(), 3u);
  std::map<std::string, std::string> verdict;  // mechanism -> verdict
  for (const DecisionRecord& d : decisions) verdict[d.scope.mechanism] = DecisionVerdictName(d.verdict);
  auto total = [](const std::map<std::string, int>& m) {
    int n = 0;
    for (const auto& [v, count] : m) n += count;
    return n;
  };
  ASSERT_EQ(r.knowledge.size(), 3u);
  EXPECT_EQ(r.knowledge[0].run_id, ids_.run1);
  EXPECT_EQ(total(r.knowledge[0].touched), 1);
  EXPECT_EQ(r.knowledge[0].touched.at(verdict["vec"]), 1);
  EXPECT_EQ(total(r.knowledge[1].touched), 1);
  EXPECT_EQ(r.knowledge[1].touched.at(verdict["unroll"]), 1);
  EXPECT_EQ(total(r.knowledge[1].known), 2) << "run 1's decision and run 2's";
  EXPECT_EQ(total(r.knowledge[2].touched), 0);
  EXPECT_EQ(total(r.knowledge[2].known), 2) << "the decision of a run outside the store counts for none";
  for (const char* v : {"hypothesis", "validated", "refuted"}) EXPECT_EQ(r.knowledge[2].known.count(v), 1u) << v;
}

TEST_F(ReportBuild, ARunByIdOrPrefixReportsThatRunAndTheSealItMade) {
  Report r = Build({ids_.run1.substr(0, 6), ""});
  EXPECT_EQ(r.scope.rfind("run " + ids_.run1, 0), 0u) << r.scope;
  ASSERT_EQ(r.runs.size(), 1u);
  ASSERT_EQ(r.seals.size(), 1u);
  EXPECT_EQ(r.nightly.size(), 1u);
  const ConfigRow* small = Row(r, report_fixture::kSoftmax, "small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->attempts, 3);
  EXPECT_NEAR(small->expert_us, 10.1, 1e-9) << "the nightly checks of the seal it made";
  EXPECT_EQ(Row(r, report_fixture::kGemm, "1024^3"), nullptr);
}

TEST_F(ReportBuild, ARunWithoutASealIsServedByTheSealItWasTimedAgainst) {
  Report r = Build({ids_.run2, ""});
  EXPECT_TRUE(r.seals.empty());
  const ConfigRow* large = Row(r, report_fixture::kSoftmax, "large");
  ASSERT_NE(large, nullptr);
  EXPECT_NEAR(large->sealed_us, 38.5, 1e-9);
  EXPECT_EQ(large->seal, ids_.seal);
  EXPECT_NEAR(large->expert_us, 50, 1e-9) << "the run timed the seal: the expert is the one that seal replaced";
  ASSERT_EQ(r.knowledge.size(), 1u);
}

TEST_F(ReportBuild, AnOperatorSelectsItsRunsAndSeals) {
  Report r = Build({"", report_fixture::kGemm});
  EXPECT_EQ(r.scope, std::string("operator ") + report_fixture::kGemm);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.seals.empty());
  EXPECT_TRUE(r.nightly.empty());
  ASSERT_EQ(r.configs.size(), 1u);
}

TEST_F(ReportBuild, AnUnknownRunIsAnErrorAndAnUnknownOperatorAnEmptyReport) {
  Report r;
  EXPECT_FALSE(BuildReport(store_, {"0123456789abcdef", ""}, {}, &r, &err_));
  EXPECT_NE(err_.find("no run 0123456789abcdef"), std::string::npos) << err_;
  EXPECT_FALSE(BuildReport(store_, {ids_.run1, report_fixture::kGemm}, {}, &r, &err_)) << "both";
  ASSERT_TRUE(BuildReport(store_, {"", "never_run"}, {}, &r, &err_)) << err_;
  EXPECT_TRUE(r.Empty());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("never_run"), std::string::npos) << r.notes[0];
}

TEST(ReportBuildEmpty, AFreshStoreIsAnEmptyReportThatSaysSo) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  Report r;
  ASSERT_TRUE(BuildReport(store, {}, {}, &r, &err)) << err;
  EXPECT_TRUE(r.Empty());
  EXPECT_TRUE(r.configs.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no run, seal or nightly check"), std::string::npos);
}

}  // namespace
}  // namespace forgek
