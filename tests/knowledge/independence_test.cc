// A decision counts each measurement once: comparisons that share an attempt's timing are not
// independent, and one lucky timing must not read as several supporting comparisons.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "knowledge/independence.h"
#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

using namespace testing_fixtures;

ConfigResult Timing(const std::string& config, double candidate_us, double incumbent_us) {
  ConfigResult c;
  c.config = config;
  c.correctness.ok = true;
  c.candidate.median_us = candidate_us;
  c.candidate.rel_noise = 0.005;
  c.incumbent.median_us = incumbent_us;
  c.incumbent.rel_noise = 0.005;
  c.speedup = incumbent_us / candidate_us;
  return c;
}

CandidateManifest StagesFamily() {
  CandidateManifest m;
  m.params = {{"STAGES", {2, 3, 4}}};
  m.controls = {{"mbarrier_pipeline", {"STAGES"}}};
  return m;
}

EvidenceRecord Search(const std::string& id, const std::string& mine, const std::string& other, double speedup,
                      double noise = 0.02) {
  EvidenceRecord e;
  e.id = id;
  e.kind = "comparison";
  e.speedup = speedup;
  e.noise = noise;
  e.created_at = "2026-01-01T00:00:00Z";
  e.detail_json = nlohmann::json{{"against", "x"}, {"attempts", {mine, other}}}.dump();
  return e;
}

// The run loop pairs each timed attempt with every earlier one of its family (RunState::Learn): a
// lucky `stages=4` timed after `stages=2` and `stages=3` makes two comparisons on stages=4, both
// resting on its one timing. They count once.
TEST(Independence, OneAttemptPairedWithSeveralCountsOnce) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("k.db"), &err)) << err;
  OperatorSpec op = GemmOperator();
  CandidateManifest family = StagesFamily();
  std::vector<TimedInstance> timed;
  auto timed_attempt = [&](const std::string& attempt, int64_t depth, double us) {
    TimedInstance now{attempt, "", {{"STAGES", depth}}, {Timing("8192^3", us, 1000)}};
    for (const TimedInstance& earlier : timed)
      for (const SettingComparison& c : CompareSearchPair(op, family, now, earlier))
        ASSERT_TRUE(RecordComparison(store, {&op, "sm90", "NVIDIA H200", "run1"}, c, nullptr, &err)) << err;
    timed.push_back(now);
  };
  auto stages = [&](const std::string& setting) {
    std::vector<DecisionRecord> ds;
    EXPECT_TRUE(store.ListDecisions({"sm90", "gemm", "large", "mbarrier_pipeline", std::nullopt, 0}, &ds, &err)) << err;
    for (const DecisionRecord& d : ds)
      if (d.scope.setting == setting) return d;
    ADD_FAILURE() << "no decision " << setting;
    return DecisionRecord{};
  };
  timed_attempt("b2", 2, 1000);
  timed_attempt("b3", 3, 1000);
  timed_attempt("a", 4, 950);  // the lucky one
  DecisionRecord s4 = stages("stages=4");
  DecisionRecord full;
  std::vector<EvidenceRecord> evidence;
  bool found = false;
  ASSERT_TRUE(store.GetDecision(s4.id, &full, &evidence, &found, &err)) << err;
  EXPECT_EQ(evidence.size(), 2u) << "both comparisons stay on record";
  EXPECT_EQ(s4.comparisons, 1) << s4.text;  // was 2
  EXPECT_EQ(s4.supporting, 1);
  EXPECT_NEAR(s4.confidence, 0.5, 1e-12);  // was 2/3
  EXPECT_NEAR(s4.effect, 1000.0 / 950.0, 1e-9);
  EXPECT_NE(s4.text.find("over 1 comparison (of 2 recorded; those sharing a measurement count once)"),
            std::string::npos)
      << s4.text;
  // stages=2 is on both sides of b2's timing: once too.
  EXPECT_EQ(stages("stages=2").comparisons, 1);

  // A second stages=4 attempt, timed normally, brings a measurement of its own: two disjoint pairs.
  timed_attempt("a2", 4, 1000);
  s4 = stages("stages=4");
  EXPECT_EQ(s4.comparisons, 2) << s4.text;  // 4 recorded: a and a2 each against b2 and b3
  ASSERT_TRUE(store.GetDecision(s4.id, &full, &evidence, &found, &err)) << err;
  EXPECT_EQ(evidence.size(), 4u);
}

// The noise of a decision is that of what it counts: two comparisons sharing one attempt are one.
TEST(Independence, SharedComparisonsDoNotNarrowTheInterval) {
  DecisionRecord d;
  d.scope = {"sm90", "gemm", "large", "mbarrier_pipeline", "stages=4"};
  DeriveDecision({Search("e1", "a", "b", 1.05), Search("e2", "a", "c", 1.05)}, &d);
  EXPECT_EQ(d.comparisons, 1);
  EXPECT_NEAR(d.effect_hi, 1.05 * 1.02, 1e-9);  // was 1.05 * (1 + 0.02 * sqrt(2) / 2)
  EXPECT_NEAR(d.effect_lo, 1.05 * 0.98, 1e-9);
  // Two disjoint pairs are independent and both count.
  DeriveDecision({Search("e1", "a", "b", 1.05), Search("e2", "a2", "c", 1.05)}, &d);
  EXPECT_EQ(d.comparisons, 2);
  EXPECT_NEAR(d.effect_hi, 1.05 * (1 + 0.02 * std::sqrt(2.0) / 2), 1e-9);
}

TEST(Independence, ALargestSetOfComparisonsSharingNoAttempt) {
  // Recorded in this order, a greedy pick (x1-y1) would leave one pair; x1-y2 and x2-y1 are two.
  std::vector<EvidenceRecord> ev = {Search("e1", "x1", "y1", 1.1), Search("e2", "x1", "y2", 1.1),
                                    Search("e3", "x2", "y1", 1.1)};
  ev[1].created_at = "2026-01-01T00:00:01Z";
  ev[2].created_at = "2026-01-01T00:00:02Z";
  EXPECT_EQ(IndependentComparisons(ev), (std::vector<size_t>{1, 2}));
  // Ablations are timed afresh, each counts; comparisons naming no attempt count each; a
  // non-positive speedup and an observation count for nothing.
  EvidenceRecord ablation;
  ablation.kind = "ablation";
  ablation.speedup = 1.2;
  EvidenceRecord bare = Search("e5", "", "", 1.1);
  bare.detail_json = "{}";
  EvidenceRecord broken = Search("e6", "z", "w", 0);
  EvidenceRecord observation;
  observation.kind = "observation";
  std::vector<EvidenceRecord> mixed = {ablation, ablation, bare, bare, broken, observation};
  EXPECT_EQ(IndependentComparisons(mixed), (std::vector<size_t>{0, 1, 2, 3}));
  // A star of three comparisons around one attempt is one.
  EXPECT_EQ(IndependentComparisons({Search("s1", "a", "b", 1.1), Search("s2", "a", "c", 0.9),
                                    Search("s3", "a", "d", 1.3)})
                .size(),
            1u);
}

// An import may bring any number of comparisons on one decision: the count stays fast and needs no
// deep stack. A ladder x_i-y_i, x_i-y_(i+1), recorded so that the first choices block later ones,
// has a matching of every x.
TEST(Independence, ManyComparisonsAreCountedQuickly) {
  const int n = 20000;
  std::vector<EvidenceRecord> ev;
  for (int i = 0; i < n; ++i) {
    ev.push_back(Search("l" + std::to_string(i), "x" + std::to_string(i), "y" + std::to_string(i + 1), 1.1));
    ev.push_back(Search("m" + std::to_string(i), "x" + std::to_string(i + 1), "y" + std::to_string(i + 1), 1.1));
  }
  EXPECT_EQ(IndependentComparisons(ev).size(), static_cast<size_t>(n));
  std::vector<EvidenceRecord> star;
  for (int i = 0; i < n; ++i) star.push_back(Search("s" + std::to_string(i), "a", "b" + std::to_string(i), 1.1));
  EXPECT_EQ(IndependentComparisons(star).size(), 1u);
}

}  // namespace
}  // namespace forgek
