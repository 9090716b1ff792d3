// Distillation and retrieval: expert observations stay hypotheses, only controlled comparisons
// validate or refute a setting, and decisions transfer (marked) to operators of the same category.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

using namespace testing_fixtures;

// One config timed against an incumbent, each median with 0.5% noise.
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

// A gemm family claiming wgmma whose tile and stages are controlled params.
Candidate WgmmaFamily() {
  Candidate c;
  c.path = "families/wgmma.cu";
  c.manifest.name = "wgmma";
  c.manifest.mechanisms = {"wgmma", "tma", "mbarrier_pipeline"};
  c.manifest.params = {{"BM", {64, 128}}, {"BN", {128, 256}}, {"STAGES", {2, 3, 4}}};
  c.manifest.controls = {{"tile", {"BM", "BN"}}, {"mbarrier_pipeline", {"STAGES"}}};
  return c;
}

class DistillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(dir_.file("store.db"), &err_)) << err_;
    kb_ = ShippedKnowledge();
    op_ = GemmOperator();
  }
  std::vector<DecisionRecord> All() {
    std::vector<DecisionRecord> ds;
    EXPECT_TRUE(store_.ListDecisions({}, &ds, &err_)) << err_;
    return ds;
  }
  const DecisionRecord* Find(const std::vector<DecisionRecord>& ds, const std::string& mech, const std::string& setting,
                             const std::string& regime = "large") {
    for (const auto& d : ds)
      if (d.scope.mechanism == mech && d.scope.setting == setting && d.scope.regime == regime) return &d;
    return nullptr;
  }
  // The pointer points into `ds`: a temporary list would leave it dangling.
  const DecisionRecord* Find(std::vector<DecisionRecord>&&, const std::string&, const std::string&,
                             const std::string& = "large") = delete;
  void Record(const SettingComparison& c, const OperatorSpec& op) {
    ComparisonOrigin origin{&op, "sm90", "NVIDIA H200", "run1"};
    ASSERT_TRUE(RecordComparison(store_, origin, c, nullptr, &err_)) << err_;
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

TEST(Controls, NamedSettingsAndControlledDifferences) {
  Candidate f = WgmmaFamily();
  ParamAssignment a{{"BM", 128}, {"BN", 256}, {"STAGES", 4}};
  EXPECT_EQ(NamedSetting(f.manifest.controls[0], a), "bm=128,bn=256");
  EXPECT_EQ(NamedSetting(f.manifest.controls[1], a), "stages=4");
  ParamAssignment stages2 = a, tile = a, both = a;
  stages2["STAGES"] = 2;
  tile["BN"] = 128;
  both["STAGES"] = 2;
  both["BM"] = 64;
  const ControlSpec* c = ControlledDifference(f.manifest, a, stages2);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->mechanism, "mbarrier_pipeline");
  ASSERT_NE(ControlledDifference(f.manifest, a, tile), nullptr);
  EXPECT_EQ(ControlledDifference(f.manifest, a, tile)->mechanism, "tile");
  EXPECT_EQ(ControlledDifference(f.manifest, a, both), nullptr) << "two mechanisms moved at once isolate nothing";
  EXPECT_EQ(ControlledDifference(f.manifest, a, a), nullptr) << "the same instance compares nothing";
  ParamAssignment uncontrolled = a;
  uncontrolled["GROUP_M"] = 8;
  EXPECT_EQ(ControlledDifference(f.manifest, a, uncontrolled), nullptr) << "a param no control names";
}

// The issue's first case: slow instances (a bad tile) and fast ones both use wgmma. Every pair of
// them is either a tile comparison or a stages comparison; none is evidence about wgmma.
TEST_F(DistillTest, SlowAndFastInstancesOfAWgmmaFamilyLeaveWgmmaUnrefuted) {
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_)) << err_;
  Candidate f = WgmmaFamily();
  // cuBLAS takes 1000 us; the bad tile 64x128 takes 1500 (0.67x), the good tile 128x256 takes 980.
  std::vector<TimedInstance> timed;
  int id = 0;
  for (int64_t bm : {64, 128})
    for (int64_t stages : {2, 4}) {
      int64_t bn = bm == 64 ? 128 : 256;
      double t = (bm == 64 ? 1500.0 : 980.0) * (stages == 4 ? 1.0 : 1.04);
      TimedInstance ti{"a" + std::to_string(id++), "", {{"BM", bm}, {"BN", bn}, {"STAGES", stages}},
                       {Timing("8192^3", t, 1000)}};
      for (const TimedInstance& e : timed)
        for (const SettingComparison& c : CompareSearchPair(op_, f.manifest, ti, e)) Record(c, op_);
      timed.push_back(ti);
    }
  std::vector<DecisionRecord> ds = All();
  for (const auto& d : ds) {
    if (d.scope.mechanism == "wgmma") {
      EXPECT_EQ(d.verdict, DecisionVerdict::hypothesis) << d.text;
      EXPECT_TRUE(d.scope.setting.empty());
      EXPECT_EQ(d.comparisons, 0);
    }
    EXPECT_TRUE(d.verdict != DecisionVerdict::refuted || !d.scope.setting.empty()) << "a whole mechanism refuted: " << d.text;
  }
  // What the pairs do show: stages=4 beats stages=2 (in both tiles), the 128x256 tile beats 64x128.
  const DecisionRecord* s4 = Find(ds, "mbarrier_pipeline", "stages=4");
  ASSERT_NE(s4, nullptr);
  EXPECT_EQ(s4->verdict, DecisionVerdict::validated) << s4->text;
  EXPECT_EQ(s4->comparisons, 2);
  EXPECT_NEAR(s4->effect, 1.04, 1e-9);
  EXPECT_LT(s4->effect_lo, s4->effect);
  EXPECT_GT(s4->effect_hi, s4->effect);
  const DecisionRecord* s2 = Find(ds, "mbarrier_pipeline", "stages=2");
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s2->verdict, DecisionVerdict::refuted);
  const DecisionRecord* good = Find(ds, "tile", "bm=128,bn=256");
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->verdict, DecisionVerdict::validated);
  // A pair across tile and stages at once (a0 vs a3) isolated nothing: 2 comparisons per side only.
  EXPECT_EQ(good->comparisons, 2);
  EXPECT_NE(s4->text.find("mbarrier_pipeline stages=4 for gemm on sm90 (large shapes): helps 1.04x ["),
            std::string::npos)
      << s4->text;
  EXPECT_NE(s4->text.find("over 2 comparisons"), std::string::npos) << s4->text;
}

// The issue's second case: an ablation (stages 4 vs 2, interleaved, 4 faster beyond noise).
TEST_F(DistillTest, AnAblationValidatesTheFasterSettingAndNothingElse) {
  Candidate f = WgmmaFamily();
  ParamAssignment best{{"BM", 128}, {"BN", 256}, {"STAGES", 4}}, variant = best;
  variant["STAGES"] = 2;
  EvalResult r;  // the variant as candidate, the best as its incumbent
  r.outcome = Outcome::slower;
  r.configs = {Timing("8192^3", 1050, 1000), Timing("4096^3", 131.25, 125)};
  std::vector<SettingComparison> found = CompareAblation(op_, f.manifest, best, variant, r);
  ASSERT_EQ(found.size(), 1u);  // both configs are "large"
  EXPECT_EQ(found[0].kind, "ablation");
  EXPECT_EQ(found[0].setting, "stages=4");
  EXPECT_EQ(found[0].against, "stages=2");
  EXPECT_NEAR(found[0].speedup, 1.05, 1e-3);
  EXPECT_GT(found[0].noise, 0);
  found[0].metric_deltas = {{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 6.5}};
  Record(found[0], op_);

  std::vector<DecisionRecord> ds = All();
  int validated = 0;
  for (const auto& d : ds) validated += d.verdict == DecisionVerdict::validated;
  EXPECT_EQ(validated, 1);
  const DecisionRecord* s4 = Find(ds, "mbarrier_pipeline", "stages=4");
  ASSERT_NE(s4, nullptr);
  EXPECT_EQ(s4->verdict, DecisionVerdict::validated);
  EXPECT_EQ(s4->settings_json, R"({"STAGES":4})");
  EXPECT_EQ(s4->operators, std::vector<std::string>{"gemm_bf16"});

  // The evidence names the comparison: kind, the other setting, both times per config, the deltas.
  DecisionRecord d;
  std::vector<EvidenceRecord> ev;
  bool have = false;
  ASSERT_TRUE(store_.GetDecision(s4->id, &d, &ev, &have, &err_)) << err_;
  ASSERT_TRUE(have);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "ablation");
  EXPECT_NE(ev[0].detail_json.find("\"against\":\"stages=2\""), std::string::npos) << ev[0].detail_json;
  EXPECT_NE(ev[0].detail_json.find("\"against_us\":1050"), std::string::npos) << ev[0].detail_json;
  EXPECT_NE(ev[0].metric_deltas_json.find("6.5"), std::string::npos);

  // Within noise: no verdict either way.
  EvalResult same;
  same.outcome = Outcome::same;
  same.configs = {Timing("8192^3", 1003, 1000)};
  ParamAssignment bm64 = best;
  bm64["STAGES"] = 3;
  for (const SettingComparison& c : CompareAblation(op_, f.manifest, best, bm64, same)) Record(c, op_);
  std::vector<DecisionRecord> after_same = All();
  const DecisionRecord* s3 = Find(after_same, "mbarrier_pipeline", "stages=3");
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->verdict, DecisionVerdict::hypothesis);
  EXPECT_NE(s3->text.find("no effect beyond noise"), std::string::npos) << s3->text;
  // A failed ablation is no comparison.
  EvalResult wrong;
  wrong.outcome = Outcome::wrong;
  EXPECT_TRUE(CompareAblation(op_, f.manifest, best, variant, wrong).empty());
}

// The issue's third case: what an expert kernel uses is a hypothesis to try, never a verdict.
TEST_F(DistillTest, ExpertObservationsAloneStayHypotheses) {
  std::vector<Observation> obs;
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), &obs, &err_)) << err_;
  EXPECT_GT(obs.size(), 20u);
  std::set<std::string> mechs;
  for (const auto& d : All()) {
    mechs.insert(d.scope.mechanism);
    EXPECT_EQ(d.verdict, DecisionVerdict::hypothesis) << d.text;
    EXPECT_EQ(d.comparisons, 0);
    EXPECT_TRUE(d.scope.setting.empty());
    EXPECT_NE(d.text.find("untested here"), std::string::npos) << d.text;
  }
  for (const char* m : {"wgmma", "tma", "tma_multicast", "thread_block_cluster", "warp_specialization",
                        "mbarrier_pipeline", "persistent_grid"})
    EXPECT_TRUE(mechs.count(m)) << m;
  std::vector<DecisionRecord> ds = All();
  const DecisionRecord* pipe = Find(ds, "mbarrier_pipeline", "");
  ASSERT_NE(pipe, nullptr);
  EXPECT_NE(pipe->settings_json.find("\"stages\":\"3\""), std::string::npos) << pipe->settings_json;
  // Recording the same profile again adds nothing: observations and evidence are content-hashed.
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_));
  std::vector<DecisionRecord> all = All();
  ASSERT_NE(Find(all, "wgmma", ""), nullptr);
  EXPECT_EQ(Find(all, "wgmma", "")->supporting, 1);
  // Only observations and comparisons are evidence.
  EvidenceRecord attempt;
  attempt.kind = "attempt";
  attempt.source = "attempt a1";
  EXPECT_FALSE(store_.AddEvidence({"sm90", "gemm", "large", "wgmma", ""}, attempt, nullptr, &err_));
  EXPECT_NE(err_.find("only observation, comparison and ablation"), std::string::npos) << err_;
}

// The issue's fifth case: learned on rmsnorm_bf16, retrieved for layernorm_bf16 as transferred.
TEST_F(DistillTest, ADecisionLearnedOnRmsnormTransfersToLayernorm) {
  OperatorSpec rms, ln;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/rmsnorm_bf16", &rms, &diags)) << FormatDiagnostics(diags);
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/layernorm_bf16", &ln, &diags)) << FormatDiagnostics(diags);
  ASSERT_EQ(rms.category, ln.category);
  std::vector<std::string> regimes;
  for (const auto& c : ln.configs) regimes.push_back(ShapeRegime(ln, c.name));
  // A config of rmsnorm in a regime layernorm's configs also have.
  std::string learned_on;
  for (const auto& c : rms.configs)
    if (learned_on.empty() && std::find(regimes.begin(), regimes.end(), ShapeRegime(rms, c.name)) != regimes.end())
      learned_on = c.name;
  ASSERT_FALSE(learned_on.empty());
  Candidate f;
  f.manifest.params = {{"VEC", {4, 8}}};
  f.manifest.controls = {{"vector_16B", {"VEC"}}};
  EvalResult r;
  r.outcome = Outcome::slower;
  r.configs = {Timing(learned_on, 120, 100)};
  std::vector<SettingComparison> found = CompareAblation(rms, f.manifest, {{"VEC", 8}}, {{"VEC", 4}}, r);
  ASSERT_EQ(found.size(), 1u);
  Record(found[0], rms);

  std::vector<RetrievedDecision> got;
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm90", ln.category, ln.name, regimes}, 0, &got, &err_)) << err_;
  const RetrievedDecision* vec8 = nullptr;
  for (const auto& d : got)
    if (d.setting == "vec=8") vec8 = &d;
  ASSERT_NE(vec8, nullptr) << "regime " << found[0].regime;
  EXPECT_EQ(vec8->verdict, DecisionVerdict::validated);
  EXPECT_TRUE(vec8->transferred);
  EXPECT_EQ(vec8->basis, "same category (learned on rmsnorm_bf16)");
  EXPECT_NE(vec8->text.find("transferred from rmsnorm_bf16"), std::string::npos) << vec8->text;
  EXPECT_NE(DescribeRetrieval(got).find("same category"), std::string::npos);
  // For rmsnorm itself it is its own knowledge; on another arch nothing applies.
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm90", rms.category, rms.name, {}}, 0, &got, &err_));
  ASSERT_FALSE(got.empty());
  for (const auto& d : got) EXPECT_FALSE(d.transferred) << d.text;
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm100", ln.category, ln.name, {}}, 0, &got, &err_));
  EXPECT_TRUE(got.empty());
  // Another category on the same arch ranks last and says so.
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm90", "softmax", "softmax_fp32", {}}, 0, &got, &err_));
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front().basis.rfind("same arch", 0), 0u) << got.front().basis;
}

TEST_F(DistillTest, RetrievalRanksAndRenders) {
  ASSERT_TRUE(AnalyzeAndRecord(store_, kb_, op_, "sm90", "NVIDIA H200", CublasGemmProfile(), nullptr, &err_)) << err_;
  Candidate f = WgmmaFamily();
  EvalResult r;
  r.outcome = Outcome::slower;
  r.configs = {Timing("8192^3", 1200, 1000)};
  for (const SettingComparison& c :
       CompareAblation(op_, f.manifest, {{"BM", 128}, {"BN", 256}, {"STAGES", 4}}, {{"BM", 128}, {"BN", 256}, {"STAGES", 2}}, r))
    Record(c, op_);
  std::vector<RetrievedDecision> got;
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm90", "gemm", "gemm_bf16", {"large"}}, 0, &got, &err_)) << err_;
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got.front().setting, "stages=4");
  EXPECT_EQ(got.front().verdict, DecisionVerdict::validated);
  EXPECT_EQ(got.back().setting, "stages=2");
  EXPECT_EQ(got.back().verdict, DecisionVerdict::refuted);
  for (const auto& d : got) EXPECT_TRUE(d.regime == "large" || d.regime == "any") << d.regime;
  std::vector<RetrievedDecision> limited;
  ASSERT_TRUE(RetrieveDecisions(store_, {"sm90", "gemm", "gemm_bf16", {"large"}}, 2, &limited, &err_));
  EXPECT_EQ(limited.size(), 2u);

  std::string prompt = RenderDecisionsPrompt(got, kb_);
  size_t prefer = prompt.find("Validated"), explore = prompt.find("not yet validated"), avoid = prompt.find("avoid");
  ASSERT_NE(prefer, std::string::npos) << prompt;
  ASSERT_NE(explore, std::string::npos) << prompt;
  ASSERT_NE(avoid, std::string::npos) << prompt;
  EXPECT_LT(prefer, explore);
  EXPECT_LT(explore, avoid);
  EXPECT_EQ(prompt.find("__global__"), std::string::npos);  // mechanisms and settings, never code
  EXPECT_NE(RenderDecisionsPrompt({}, kb_).find("No recorded knowledge"), std::string::npos);
}

TEST(ClaimCheck, ClaimedMechanismsAreCheckedAgainstSass) {
  KnowledgeBase kb = ShippedKnowledge();
  std::map<std::string, int> classes = {{"HGMMA", 64}, {"SYNCS", 12}, {"FFMA", 900}};
  std::vector<Observation> obs =
      CheckClaimedMechanisms({"wgmma", "tma", "mbarrier_pipeline", "persistent_grid"}, classes, kb, "gemm_bf16", "sm90",
                             "candidate:abc");
  std::map<std::string, std::string> verdict;
  for (const auto& o : obs) {
    verdict[o.key] = o.value;
    EXPECT_EQ(o.kind, "claim");
    EXPECT_FALSE(o.evidence.empty());
  }
  EXPECT_EQ(verdict["wgmma"], "verified");
  EXPECT_EQ(verdict["mbarrier_pipeline"], "verified");
  EXPECT_EQ(verdict["tma"], "unverified") << "no UTMALDG in the SASS";
  EXPECT_FALSE(verdict.count("persistent_grid")) << "no SASS sign in the catalogue: not checkable";
}

}  // namespace
}  // namespace forgek
