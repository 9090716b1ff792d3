// Distillation and retrieval on recorded observations: hypotheses, validation, refutation, ranking.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

using namespace testing_fixtures;

EvalResult Timed(Outcome outcome, const std::vector<std::pair<std::string, double>>& speedups) {
  EvalResult r;
  r.outcome = outcome;
  for (const auto& [config, s] : speedups) {
    ConfigResult c;
    c.config = config;
    c.speedup = s;
    r.configs.push_back(c);
  }
  return r;
}

class DistillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(dir_.file("store.db"), &err_)) << err_;
    kb_ = ShippedKnowledge();
    op_ = GemmOperator();
  }
  DecisionRecord Decision(const std::string& regime, const std::string& mech) {
    DecisionQuery q{"sm90", "gemm", regime, mech, "", 0};
    std::vector<DecisionRecord> ds;
    EXPECT_TRUE(store_.ListDecisions(q, &ds, &err_)) << err_;
    for (const auto& d : ds)
      if (d.scope.regime == regime) return d;
    ADD_FAILURE() << "no decision " << regime << "/" << mech;
    return {};
  }
  bool Attempt(const std::string& id, const std::vector<std::string>& mechs, const EvalResult& r,
               std::vector<DecisionRecord>* updated = nullptr) {
    AttemptEvidenceInput in;
    in.op = &op_;
    in.arch = "sm90";
    in.device = "NVIDIA H200";
    in.run_id = "run1";
    in.attempt_id = id;
    in.candidate_hash = "hash-" + id;
    in.mechanisms = mechs;
    in.params = {{"BM", 128}, {"BN", 256}, {"STAGES", 4}};
    in.result = &r;
    in.candidate_metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 30}};
    in.incumbent_metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 21}};
    return RecordAttemptEvidence(store_, in, updated, &err_);
  }
  TempDir dir_;
  Store store_;
  KnowledgeBase kb_;
  OperatorSpec op_;
  std::string err_;
};

TEST(Regime, FromConfigs) {
  OperatorSpec op = GemmOperator();
  EXPECT_EQ(ShapeRegime(op, "8192^3"), "large");
  EXPECT_EQ(ShapeRegime(op, "M64_N8192_K8192"), "skinny");
  EXPECT_EQ(ShapeRegime(op, "1024^3"), "small");
  EXPECT_EQ(ShapeRegime(op, "nope"), "any");
}

TEST_F(DistillTest, ReferenceObservationsBecomeHypotheses) {
  std::vector<Observation> obs;
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), &obs, &err_)) << err_;
  EXPECT_GT(obs.size(), 20u);
  std::vector<DecisionRecord> ds;
  ASSERT_TRUE(store_.ListDecisions({"sm90", "gemm", "large", "", "", 0}, &ds, &err_));
  std::set<std::string> mechs;
  for (const auto& d : ds) {
    mechs.insert(d.scope.mechanism);
    EXPECT_EQ(d.verdict, "hypothesis");
    EXPECT_NEAR(d.confidence, 0.5 / 1.5, 1e-9);  // one observation, weight 0.5
  }
  for (const char* m : {"wgmma", "tma", "tma_multicast", "thread_block_cluster", "warp_specialization",
                        "mbarrier_pipeline", "persistent_grid"})
    EXPECT_TRUE(mechs.count(m)) << m;
  DecisionRecord wg = Decision("large", "wgmma");
  EXPECT_NE(wg.settings_json.find("\"tile\":\"320x128\""), std::string::npos) << wg.settings_json;
  DecisionRecord pipe = Decision("large", "mbarrier_pipeline");
  EXPECT_NE(pipe.settings_json.find("\"stages\":\"3\""), std::string::npos) << pipe.settings_json;
  EXPECT_NE(pipe.text.find("untested"), std::string::npos);

  // Recording the same profile again adds nothing: observations and evidence are content-hashed.
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_));
  EXPECT_EQ(Decision("large", "wgmma").supporting, 1);
  std::vector<Observation> stored;
  ASSERT_TRUE(store_.ListObservations({"gemm_bf16", "sm90", "", "", "", 0}, &stored, &err_));
  EXPECT_EQ(stored.size(), obs.size());
}

TEST_F(DistillTest, AttemptsValidateAndRefute) {
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_)) << err_;
  // Faster on the large configs, slower on the skinny one: evidence is split by regime.
  std::vector<DecisionRecord> updated;
  ASSERT_TRUE(Attempt("a1", {"wgmma", "split_k"},
                      Timed(Outcome::faster, {{"4096^3", 1.10}, {"8192^3", 1.21}, {"M64_N8192_K8192", 0.80}}),
                      &updated))
      << err_;
  EXPECT_EQ(updated.size(), 4u);
  DecisionRecord large = Decision("large", "wgmma");
  EXPECT_EQ(large.verdict, "validated");
  EXPECT_NEAR(large.effect, std::sqrt(1.10 * 1.21), 1e-9);
  EXPECT_NEAR(large.confidence, 1.5 / 2.5, 1e-9);
  EXPECT_NE(large.settings_json.find("\"STAGES\":4"), std::string::npos);  // the attempt's settings win
  DecisionRecord skinny = Decision("skinny", "split_k");
  EXPECT_EQ(skinny.verdict, "refuted");
  EXPECT_LT(skinny.effect, 1.0);

  // Independent evidence raises confidence; contradiction lowers it.
  ASSERT_TRUE(Attempt("a2", {"wgmma"}, Timed(Outcome::faster, {{"8192^3", 1.05}})));
  double raised = Decision("large", "wgmma").confidence;
  EXPECT_GT(raised, large.confidence);
  ASSERT_TRUE(Attempt("a3", {"wgmma"}, Timed(Outcome::slower, {{"8192^3", 0.90}})));
  DecisionRecord after = Decision("large", "wgmma");
  EXPECT_LT(after.confidence, raised);
  EXPECT_EQ(after.verdict, "validated");  // two attempts for, one against
  EXPECT_EQ(after.contradicting, 1);

  // Never-timed outcomes and noise are no evidence.
  ASSERT_TRUE(Attempt("a4", {"wgmma"}, Timed(Outcome::wrong, {{"8192^3", 3.0}})));
  ASSERT_TRUE(Attempt("a5", {"wgmma"}, Timed(Outcome::slower, {{"8192^3", 0.99}})));
  EXPECT_EQ(Decision("large", "wgmma").supporting + Decision("large", "wgmma").contradicting, 4);

  // Evidence keeps the metric deltas.
  DecisionRecord d;
  std::vector<EvidenceRecord> ev;
  bool found = false;
  ASSERT_TRUE(store_.GetDecision(after.id.substr(0, 12), &d, &ev, &found, &err_));
  ASSERT_TRUE(found);
  bool has_delta = false;
  for (const auto& e : ev) has_delta |= e.metric_deltas_json.find("dram__throughput") != std::string::npos;
  EXPECT_TRUE(has_delta);
}

TEST_F(DistillTest, RetrievalRanksAndRenders) {
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_)) << err_;
  ASSERT_TRUE(Attempt("a1", {"wgmma"}, Timed(Outcome::faster, {{"8192^3", 1.2}})));
  ASSERT_TRUE(Attempt("a2", {"cp_async"}, Timed(Outcome::slower, {{"8192^3", 0.7}})));
  std::vector<RetrievedDecision> got;
  ASSERT_TRUE(RetrieveDecisions(store_, "sm90", "gemm", "large", 0, &got, &err_)) << err_;
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got.front().mechanism, "wgmma");
  EXPECT_EQ(got.front().verdict, "validated");
  EXPECT_EQ(got.back().mechanism, "cp_async");
  EXPECT_EQ(got.back().verdict, "refuted");
  std::vector<RetrievedDecision> other;
  ASSERT_TRUE(RetrieveDecisions(store_, "sm100", "gemm", "large", 0, &other, &err_));
  EXPECT_TRUE(other.empty());
  ASSERT_TRUE(RetrieveDecisions(store_, "sm90", "gemm", "large", 2, &other, &err_));
  EXPECT_EQ(other.size(), 2u);

  std::string prompt = RenderDecisionsPrompt(got, kb_);
  size_t prefer = prompt.find("Validated"), explore = prompt.find("not yet validated"), avoid = prompt.find("avoid");
  ASSERT_NE(prefer, std::string::npos) << prompt;
  ASSERT_NE(explore, std::string::npos) << prompt;
  ASSERT_NE(avoid, std::string::npos) << prompt;
  EXPECT_LT(prefer, explore);
  EXPECT_LT(explore, avoid);
  EXPECT_NE(prompt.find("wgmma.mma_async"), std::string::npos);  // the catalogue's words
  EXPECT_EQ(prompt.find("__global__"), std::string::npos);       // mechanisms and settings, never code
  EXPECT_NE(RenderDecisionsPrompt({}, kb_).find("No recorded knowledge"), std::string::npos);
}

}  // namespace
}  // namespace forgek
