// What a seal serves beyond its table: a dispatch's fallback measured on every config, every kernel
// checked on shapes outside the suite, and one rule for shapes the table does not name.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/seal/outside_shapes.h"
#include "forgek/run/run.h"
#include "forgek/seal/seal.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "forgek/seal/incumbent.h"

namespace forgek {
namespace {

// TILE >= 4 is fast on small and a little faster than the reference on large; TILE <= 2 is slow
// on small and fastest on large. A dispatch takes one of each, and its fallback (the best geomean
// slower nowhere) is a TILE >= 4 instance.
double TwoRegimeModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  if (k.params.at("TILE") >= 4) return config == "small" ? 70.0 : 95.0;
  return config == "small" ? 110.0 : 60.0;
}

// The scripted GPU, except on the confirmation's seeds against the reference: there the single
// winner's confirmation (every config in one request) finds it slower on large, so that the run
// assembles a dispatch, and the fallback's check (both configs named) finds it `fallback_large_us`.
class FallbackEvaluator : public ScriptedEvaluator {
 public:
  explicit FallbackEvaluator(double fallback_large_us)
      : ScriptedEvaluator(TwoRegimeModel), fallback_large_us_(fallback_large_us) {}
  EvalResult Evaluate(const EvalRequest& req) override {
    EvalResult r = ScriptedEvaluator::Evaluate(req);
    if (!perturb || !req.time || req.seeds != 3 || req.incumbent.library.empty() || !req.candidate.library.empty())
      return r;
    double large_us = 0;
    if (req.configs.empty()) large_us = 120;
    if (req.configs.size() == 2) large_us = fallback_large_us_, ++fallback_checks;
    if (large_us == 0) return r;
    for (ConfigResult& c : r.configs)
      if (c.config == "large") {
        c.candidate.median_us = large_us;
        c.speedup = c.incumbent.median_us / large_us;
      }
    JudgeTimed(&r);
    return r;
  }
  bool perturb = true;
  int fallback_checks = 0;

 private:
  double fallback_large_us_;
};

struct FallbackRun {
  LoopFixture fx;
  Store store;
  std::string err;
  std::unique_ptr<Compiler> compiler;
  FallbackRun() {
    EXPECT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
    compiler = std::make_unique<Compiler>(TestCompilerOptions(fx.dir));
  }
  RunSummary Run(Evaluator* evaluator) {
    BuiltinAgent agent({.seed = 4});
    RunServices services{&agent, compiler.get(), evaluator, &store};
    RunOptions opts;
    opts.iterations = 10;
    RunSummary s;
    EXPECT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
    return s;
  }
  nlohmann::json Dispatch(const RunSummary& s, SealRecord* seal) {
    bool found = false;
    EXPECT_TRUE(store.GetSeal(s.seal_id, seal, &found, &err) && found) << err;
    return nlohmann::json::parse(seal->metadata_json).at("dispatch");
  }
};

TEST(DispatchFallback, AFallbackThatHoldsOnEveryConfigServesShapesOutsideTheTable) {
  FallbackRun r;
  FallbackEvaluator evaluator(95.0);  // as in the search
  RunSummary s = r.Run(&evaluator);
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  EXPECT_EQ(evaluator.fallback_checks, 1) << "the fallback is measured on every config against the expert";
  SealRecord seal;
  nlohmann::json d = r.Dispatch(s, &seal);
  const nlohmann::json& fallback = d.at("kernels").at(d.at("fallback").get<size_t>());
  ASSERT_TRUE(fallback.contains("params")) << fallback.dump();
  EXPECT_GE(fallback.at("params").at("TILE").get<int>(), 4);

  // A config the table does not name (the operator gained one) is served by the fallback, in a run
  // and in `seal verify` alike; the verification measures the fallback on every config.
  OperatorSpec wider = r.fx.op;
  wider.configs.push_back({"medium", {{"N", 1 << 16}}});
  Incumbent inc;
  ASSERT_TRUE(PickIncumbent(wider, "sm90", &r.store, *r.compiler, &inc, &r.err)) << r.err;
  KernelUnderTest expert;
  expert.library = "scripted.reference";
  ServeOutsideTable(wider, expert, 132, &inc);
  ASSERT_TRUE(inc.For("medium").library.empty());
  EXPECT_GE(inc.For("medium").params.at("TILE"), 4);
  evaluator.requests.clear();
  evaluator.perturb = false;
  SealVerification v = VerifySeal(evaluator, r.store, *r.compiler, r.fx.op, seal);
  EXPECT_EQ(v.status, SealVerification::Status::holds) << v.text;
  EXPECT_NE(v.text.find("fallback: correct and slower nowhere on the suite"), std::string::npos) << v.text;
  bool measured_on_both = false;
  for (const EvalRequest& q : evaluator.requests)
    measured_on_both |= q.configs.empty() && !q.candidate.params.empty() && q.candidate.params.at("TILE") >= 4;
  EXPECT_TRUE(measured_on_both) << "seal verify times the fallback on every config";
}

TEST(DispatchFallback, AFallbackSlowerThanTheExpertOnConfirmationLeavesOtherShapesToTheExpert) {
  FallbackRun r;
  FallbackEvaluator evaluator(120.0);  // the fallback is slower than the expert on large now
  RunSummary s = r.Run(&evaluator);
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  EXPECT_EQ(evaluator.fallback_checks, 1);
  SealRecord seal;
  nlohmann::json d = r.Dispatch(s, &seal);
  EXPECT_TRUE(d.at("kernels").at(d.at("fallback").get<size_t>()).contains("reference")) << d.dump();
  EXPECT_NE(d.at("fallback_why").get<std::string>().find("is slower than the expert reference on large"),
            std::string::npos)
      << d.dump();
  ASSERT_FALSE(s.dispatch.empty());
  EXPECT_EQ(s.dispatch.back().config, "(other shapes)");
  EXPECT_EQ(s.dispatch.back().kernel.rfind("expert reference (", 0), 0u) << s.dispatch.back().kernel;
  // The table's configs still hold the kernels measured there.
  for (const nlohmann::json& row : d.at("table"))
    EXPECT_FALSE(d.at("kernels").at(row.at("kernel").get<size_t>()).contains("reference")) << row.dump();
}

// Every tiled instance is faster than the reference on the suite; instances with TILE == 8 are wrong
// on any other shape.
double WrongOutsideModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  if (config.rfind("outside ", 0) == 0 && k.params.at("TILE") == 8) return -1;
  return Model(k, config);
}

// The scripted GPU, keeping the configs of each correctness-only request as it comes (the operator
// such a request names lives only as long as the check).
class ShapeRecorder : public ScriptedEvaluator {
 public:
  using ScriptedEvaluator::ScriptedEvaluator;
  EvalResult Evaluate(const EvalRequest& req) override {
    if (!req.time)
      for (const ConfigSpec& c : req.op->configs) untimed.push_back(c);
    return ScriptedEvaluator::Evaluate(req);
  }
  std::vector<ConfigSpec> untimed;
};

TEST(OutsideShapes, AWinnerWrongOnAShapeOutsideTheSuiteIsNotSealedAndTheNextWinnerIs) {
  FallbackRun r;
  r.fx.op.ranges["N"] = {256, 1 << 22, 256};
  ShapeRecorder evaluator(WrongOutsideModel);
  RunSummary s = r.Run(&evaluator);
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(r.store.GetSeal(s.seal_id, &seal, &found, &r.err) && found) << r.err;
  EXPECT_EQ(seal.params_json.find("\"TILE\":8"), std::string::npos) << seal.params_json;
  ASSERT_GE(s.outside_shapes.size(), 2u);
  EXPECT_NE(s.outside_shapes[0].find("WRONG outside the suite"), std::string::npos) << s.outside_shapes[0];
  EXPECT_NE(s.outside_shapes.back().find("correct on 3 shapes outside the suite"), std::string::npos)
      << s.outside_shapes.back();
  // The shapes were drawn within the ranges, not the suite's, and checked without timing.
  int outside = 0;
  for (const ConfigSpec& c : evaluator.untimed) {
    if (c.name == "small" || c.name == "large") continue;  // a correctness check of the suite itself
    ASSERT_EQ(c.name.rfind("outside N=", 0), 0u) << c.name;
    const int64_t n = c.values.at("N");
    EXPECT_TRUE(n >= 256 && n <= (1 << 22) && n % 256 == 0) << n;
    EXPECT_TRUE(n != (1 << 12) && n != (1 << 20)) << "a suite shape";
    ++outside;
  }
  EXPECT_GE(outside, 6) << "3 shapes for each winner confirmed (the first is wrong there)";
}

TEST(OutsideShapes, AnOperatorWithoutRangesSaysNothingWasChecked) {
  FallbackRun r;
  ShapeRecorder evaluator(Model);
  RunSummary s = r.Run(&evaluator);
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  ASSERT_EQ(s.outside_shapes.size(), 1u);
  EXPECT_EQ(s.outside_shapes[0], "shapes outside the suite: none checked (operator.json declares no \"ranges\")");
  for (const ConfigSpec& c : evaluator.untimed) EXPECT_EQ(c.name.rfind("outside", 0), std::string::npos) << c.name;
}

TEST(OutsideShapes, DrawsDistinctShapesWithinTheRangesThatTheFilterAccepts) {
  OperatorSpec op = ToyOperator("/nonexistent", {});
  op.params = {"M", "N"};
  op.configs = {{"a", {{"M", 64}, {"N", 4096}}}, {"b", {{"M", 8192}, {"N", 4096}}}};
  op.tensors = {{"x", TensorRole::input, DType::f32, {"M", "N"}, {}}};
  op.ranges["M"] = {1, 16384, 1};
  auto even = [](const Bindings& v) { return v.at("M") % 2 == 0; };
  std::vector<ConfigSpec> a = DrawOutsideShapes(op, even, 5, 7), b = DrawOutsideShapes(op, even, 5, 7);
  ASSERT_EQ(a.size(), 5u);
  std::set<int64_t> ms;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].values, b[i].values) << "deterministic in the seed";
    EXPECT_EQ(a[i].values.at("N"), 4096) << "a param without a range keeps a suite value";
    EXPECT_EQ(a[i].values.at("M") % 2, 0);
    EXPECT_EQ(a[i].name, "outside M=" + std::to_string(a[i].values.at("M")) + ",N=4096");
    ms.insert(a[i].values.at("M"));
  }
  EXPECT_EQ(ms.size(), 5u) << "distinct";
  EXPECT_TRUE(DrawOutsideShapes(op, [](const Bindings&) { return false; }, 3, 7).empty());
  op.ranges.clear();
  EXPECT_TRUE(DrawOutsideShapes(op, even, 3, 7).empty()) << "no ranges, no shapes";
  // Shapes whose tensors would not fit are never drawn.
  op.ranges["M"] = {1 << 30, 1 << 30, 1};
  EXPECT_TRUE(DrawOutsideShapes(op, even, 3, 7).empty());
}

}  // namespace
}  // namespace forgek
