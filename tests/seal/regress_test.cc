// `forgek regress` on the CPU: which seal of each operator is checked, each config classified from a
// scripted measurement, the JUnit report read back by a real XML parser (Python's), and the rows of
// the nightly history in the store.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/core/params.h"
#include "forgek/core/utf8_text.h"
#include "forgek/seal/regress.h"
#include "forgek/core/subprocess.h"
#include "run/scripted_evaluator.h"
#include "softmax_seal_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

VerifyConfig Measured(const std::string& config, double speedup, double noise, bool correct = true) {
  VerifyConfig c;
  c.config = config;
  c.correct = correct;
  c.expert_us = 10;
  c.now_us = 10 / speedup;
  c.sealed_us = 9;
  c.drift = c.now_us / c.sealed_us - 1;
  c.vs_expert.config = config;
  c.vs_expert.speedup = speedup;
  c.vs_expert.noise = noise;
  c.vs_expert.timed = true;
  return c;
}

TEST(RegressClassify, FollowsTheVerdictRuleWithTheThresholdAsAFloorUnderTheNoise) {
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 0.90, 0.01), 0).klass, RegressClass::slower);
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 1.00, 0.01), 0).klass, RegressClass::same);
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 1.10, 0.01), 0).klass, RegressClass::faster);
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 0.995, 0.01), 0).klass, RegressClass::same) << "within the noise";
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 0.97, 0.01), 0).klass, RegressClass::slower);
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 0.97, 0.01), 0.05).klass, RegressClass::same) << "under --threshold";
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 0.90, 0.01), 0.05).klass, RegressClass::slower);
  EXPECT_EQ(ClassifyRegressConfig(Measured("a", 1.50, 0.01, false), 0).klass, RegressClass::wrong)
      << "a wrong result is wrong however fast";
  VerifyConfig untimed = Measured("a", 1.0, 0.01);
  untimed.vs_expert.timed = false;
  RegressConfig u = ClassifyRegressConfig(untimed, 0);
  EXPECT_EQ(u.klass, RegressClass::unmeasured);
  EXPECT_FALSE(u.message.empty());
  RegressConfig r = ClassifyRegressConfig(Measured("4096x4096", 0.8, 0.02), 0);
  EXPECT_EQ(r.config, "4096x4096");
  EXPECT_DOUBLE_EQ(r.speedup, 0.8);
  EXPECT_DOUBLE_EQ(r.noise, 0.02);
  EXPECT_DOUBLE_EQ(r.expert_us, 10);
  EXPECT_DOUBLE_EQ(r.sealed_us, 9);
}

class RegressTest : public SoftmaxSealFixture {
 protected:
  void SetUp() override {
    SoftmaxSealFixture::SetUp();
    AddCandidate("cand-softmax-seed", SeedSource());
  }

  SealRecord AddSeal(const std::string& id, const std::string& op, const std::string& device,
                     const std::string& created_at, const std::string& driver = "580.1") {
    SealRecord s = NewSeal(id, "cand-softmax-seed");
    s.operator_name = op;
    s.device = device;
    s.driver = driver;
    s.created_at = created_at;
    return StoreSeal(s);
  }

  RegressScope Scope() const {
    RegressScope scope;
    scope.arch = "sm90";
    scope.device = "NVIDIA H200";
    scope.driver = "580.1";
    scope.toolchain = "nvrtc 13.0";
    return scope;
  }

  // RegressSeal with the seal's kernel (the seed) timed `seal_us` and the expert `expert_us`; a
  // negative time plants a wrong result on that config.
  RegressSealResult Check(const SealRecord& s, std::function<double(const std::string&)> seal_us, double expert_us,
                          double threshold = 0) {
    ScriptedEvaluator evaluator([&](const KernelUnderTest& k, const std::string& config) {
      return k.params.count("THREADS") ? seal_us(config) : expert_us;  // the seal's kernel carries THREADS
    });
    CompilerOptions copts;
    copts.threads = 1;
    Compiler compiler(copts);
    RegressSealResult r = RegressSeal(evaluator, store_, compiler, op_, s, threshold);
    EXPECT_FALSE(evaluator.requests.empty()) << r.reason;
    return r;
  }
};

TEST_F(RegressTest, ASealFasterThanTheExpertHoldsAndASlowerOneRegressesOnEachConfig) {
  SealRecord s = AddSeal("regress-fast", op_.name, "NVIDIA H200", "2026-12-01T00:00:00Z");
  RegressSealResult fast = Check(s, [](const std::string&) { return 8.0; }, 10.0);
  ASSERT_EQ(fast.status, RegressSealResult::Status::checked) << fast.reason;
  ASSERT_EQ(fast.configs.size(), op_.configs.size());
  for (const RegressConfig& c : fast.configs) {
    EXPECT_EQ(c.klass, RegressClass::faster) << c.config;
    EXPECT_DOUBLE_EQ(c.now_us, 8.0);
    EXPECT_DOUBLE_EQ(c.expert_us, 10.0);
    EXPECT_DOUBLE_EQ(c.sealed_us, 9.0) << "the sealed time is reported beside";
  }
  EXPECT_FALSE(fast.Regressed());

  // Slower on the last config only: that config regresses, the others hold.
  const std::string last = op_.configs.back().name;
  RegressSealResult one = Check(s, [&](const std::string& c) { return c == last ? 12.0 : 10.0; }, 10.0);
  ASSERT_EQ(one.status, RegressSealResult::Status::checked) << one.reason;
  for (const RegressConfig& c : one.configs)
    EXPECT_EQ(c.klass, c.config == last ? RegressClass::slower : RegressClass::same) << c.config;
  EXPECT_TRUE(one.Regressed());
  EXPECT_NE(one.reason.find(last), std::string::npos) << one.reason;

  // The same slowdown under a --threshold above it is not a regression.
  RegressSealResult loose = Check(s, [&](const std::string& c) { return c == last ? 10.3 : 10.0; }, 10.0, 0.05);
  EXPECT_FALSE(loose.Regressed()) << RegressText({.seals = {loose}});
}

TEST_F(RegressTest, AWrongResultIsWrongOnTheConfigItNamesAndTheRestUnmeasured) {
  SealRecord s = AddSeal("regress-wrong", op_.name, "NVIDIA H200", "2026-12-01T00:00:00Z");
  ASSERT_GE(op_.configs.size(), 2u);
  const std::string bad = op_.configs[1].name;
  RegressSealResult r = Check(s, [&](const std::string& c) { return c == bad ? -1.0 : 8.0; }, 10.0);
  ASSERT_EQ(r.status, RegressSealResult::Status::checked) << r.reason;
  ASSERT_EQ(r.configs.size(), op_.configs.size());
  for (const RegressConfig& c : r.configs) {
    if (c.config == bad) {
      EXPECT_EQ(c.klass, RegressClass::wrong);
    } else if (c.klass != RegressClass::faster) {  // the scripted worker stops at the first wrong config
      EXPECT_EQ(c.klass, RegressClass::unmeasured) << c.config;
      EXPECT_NE(c.message.find("not measured"), std::string::npos) << c.message;
    }
  }
  EXPECT_TRUE(r.Regressed());
}

TEST_F(RegressTest, ASealThatCannotBeMeasuredIsAnErrorNamingWhy) {
  SealRecord s = AddSeal("regress-gone", op_.name, "NVIDIA H200", "2026-12-01T00:00:00Z");
  s.candidate_hash = "not-in-the-store";
  ScriptedEvaluator evaluator([](const KernelUnderTest&, const std::string&) { return 1.0; });
  CompilerOptions copts;
  copts.threads = 1;
  Compiler compiler(copts);
  RegressSealResult r = RegressSeal(evaluator, store_, compiler, op_, s, 0);
  EXPECT_EQ(r.status, RegressSealResult::Status::error);
  EXPECT_NE(r.reason.find("not-in-the-store"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.Regressed());
  EXPECT_TRUE(evaluator.requests.empty());
}

TEST_F(RegressTest, ChecksTheNewestSealOfThisGpuModelAndSkipsTheRestWithTheReason) {
  AddSeal("softmax-h200-old", op_.name, "NVIDIA H200", "2026-11-01T00:00:00Z");
  AddSeal("softmax-h200-new", op_.name, "NVIDIA H200", "2026-11-02T00:00:00Z");
  AddSeal("softmax-a100-newest", op_.name, "NVIDIA A100", "2026-11-03T00:00:00Z");
  AddSeal("rmsnorm-a100", "rmsnorm_bf16", "NVIDIA A100", "2026-11-03T00:00:00Z");
  AddSeal("gelu-old-driver", "gelu_bf16", "NVIDIA H200", "2026-11-03T00:00:00Z", "550.0");

  std::vector<RegressTarget> targets;
  std::string err;
  ASSERT_TRUE(SelectRegressTargets(store_, Scope(), &targets, &err)) << err;
  ASSERT_EQ(targets.size(), 3u);
  std::map<std::string, RegressTarget> by_op;
  for (const RegressTarget& t : targets) by_op[t.operator_name] = t;
  EXPECT_EQ(by_op["softmax_fp32"].seal.id, "softmax-h200-new");
  EXPECT_EQ(by_op["softmax_fp32"].skip_reason, "");
  EXPECT_EQ(by_op["rmsnorm_bf16"].seal.id, "rmsnorm-a100");
  EXPECT_NE(by_op["rmsnorm_bf16"].skip_reason.find("NVIDIA A100"), std::string::npos);
  EXPECT_NE(by_op["rmsnorm_bf16"].skip_reason.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(by_op["gelu_bf16"].skip_reason.find("driver 550.0"), std::string::npos) << by_op["gelu_bf16"].skip_reason;

  // --across-versions checks a seal of another driver; --ops limits the list and names operators
  // without a seal as skipped.
  RegressScope scope = Scope();
  scope.across_versions = true;
  scope.operators = {"gelu_bf16", "layernorm_bf16"};
  ASSERT_TRUE(SelectRegressTargets(store_, scope, &targets, &err)) << err;
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].operator_name, "gelu_bf16");
  EXPECT_EQ(targets[0].skip_reason, "");
  EXPECT_EQ(targets[1].operator_name, "layernorm_bf16");
  EXPECT_TRUE(targets[1].seal.id.empty());
  EXPECT_NE(targets[1].skip_reason.find("no seal"), std::string::npos);
}

// A report with every kind of case, names that XML must escape included.
RegressReport MixedReport() {
  RegressReport report;
  report.check_id = "check1";
  report.started_at = "2026-12-04T03:00:00Z";
  report.device = "NVIDIA H200";
  report.driver = "580.1";
  report.toolchain = "nvrtc 13.0";
  report.arch = "sm90";
  RegressSealResult a;
  a.operator_name = "softmax_fp32";
  a.seal_id = "aaaa";
  a.wall_s = 4;
  RegressConfig same = ClassifyRegressConfig(Measured("1x4096", 1.0, 0.01), 0);
  RegressConfig slower = ClassifyRegressConfig(Measured("4096x4096", 0.8, 0.01), 0);
  RegressConfig hostile = ClassifyRegressConfig(Measured("a<b>&\"c'\x01\xff", 1.2, 0.01), 0);
  RegressConfig wrong = ClassifyRegressConfig(Measured("8x128256", 1.0, 0.01, false), 0);
  RegressConfig unmeasured;
  unmeasured.config = "16x32000";
  unmeasured.klass = RegressClass::unmeasured;
  unmeasured.message = "not measured: crashed: illegal address";
  a.configs = {same, slower, hostile, wrong, unmeasured};
  a.beyond_suite = {"kernel: correct on 3 shapes outside the suite"};
  RegressSealResult b;
  b.operator_name = "rmsnorm_bf16";
  b.seal_id = "bbbb";
  b.status = RegressSealResult::Status::skipped;
  b.reason = "sealed on NVIDIA A100, this GPU is NVIDIA H200";
  RegressSealResult c;
  c.operator_name = "gelu_bf16";
  c.seal_id = "cccc";
  c.status = RegressSealResult::Status::error;
  c.reason = "no longer compiles: error: identifier \"x\" is undefined";
  RegressSealResult d;
  d.operator_name = "rope_bf16";
  d.seal_id = "dddd";
  d.configs = {ClassifyRegressConfig(Measured("decode", 1.3, 0.01), 0)};
  d.beyond_suite = {"kernel: wrong on outside M=3000"};
  d.beyond_suite_failures = d.beyond_suite;
  report.seals = {a, b, c, d};
  return report;
}

TEST(RegressReport, JunitIsReadBackByARealXmlParserWithTheCountsCiSystemsShow) {
  const std::string python = "/usr/bin/python3";
  ASSERT_TRUE(std::filesystem::exists(python)) << "python3 is installed by scripts/install-deps.sh";
  TempDir tmp;
  WriteFile(tmp.file("report.xml"), RegressJunit(MixedReport()));
  // ElementTree: the attributes Jenkins, GitLab and GitHub Actions read, and every case's outcome.
  const std::string script = R"py(
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
out = {"tag": root.tag, "attrs": root.attrib, "suites": []}
for s in root.findall("testsuite"):
    cases = []
    for c in s.findall("testcase"):
        kinds = [k.tag for k in c if k.tag in ("failure", "error", "skipped")]
        msg = [k.get("message", "") for k in c if k.tag in ("failure", "error", "skipped")]
        props = {p.get("name"): p.get("value") for p in c.findall("properties/property")}
        cases.append({"name": c.get("name"), "classname": c.get("classname"), "time": c.get("time"),
                      "kinds": kinds, "messages": msg, "props": props})
    out["suites"].append({"attrs": s.attrib, "cases": cases,
                          "props": {p.get("name"): p.get("value") for p in s.findall("properties/property")}})
print(json.dumps(out))
)py";
  ProcessOutput p = RunProcess({python, "-c", script, tmp.file("report.xml")}, 60);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  nlohmann::json j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["tag"], "testsuites");
  // 5 configs + beyond the suite, 1 skipped, 1 error, 1 config + beyond the suite.
  EXPECT_EQ(j["attrs"]["tests"], "10");
  EXPECT_EQ(j["attrs"]["failures"], "3");  // slower, wrong, rope beyond the suite
  EXPECT_EQ(j["attrs"]["errors"], "2");    // unmeasured, the seal that no longer compiles
  EXPECT_EQ(j["attrs"]["skipped"], "1");
  EXPECT_TRUE(j["attrs"].contains("time"));
  ASSERT_EQ(j["suites"].size(), 4u);
  for (const auto& s : j["suites"]) {
    for (const char* attr : {"name", "tests", "failures", "errors", "skipped", "time", "timestamp"})
      EXPECT_TRUE(s["attrs"].contains(attr)) << attr;
    for (const auto& c : s["cases"]) {
      EXPECT_FALSE(c["name"].get<std::string>().empty());
      EXPECT_EQ(c["classname"], "forgek." + s["attrs"]["name"].get<std::string>());
      EXPECT_NO_THROW(std::stod(c["time"].get<std::string>()));
    }
  }
  const auto& softmax = j["suites"][0];
  EXPECT_EQ(softmax["attrs"]["name"], "softmax_fp32");
  EXPECT_EQ(softmax["props"]["seal"], "aaaa");
  const auto& cases = softmax["cases"];
  ASSERT_EQ(cases.size(), 6u);
  EXPECT_EQ(cases[0]["kinds"].size(), 0u) << "same: passes";
  EXPECT_EQ(cases[0]["props"]["class"], "same");
  EXPECT_EQ(cases[1]["kinds"][0], "failure");
  const std::string slower = cases[1]["messages"][0];
  EXPECT_NE(slower.find("config 4096x4096: slower"), std::string::npos) << slower;
  EXPECT_NE(slower.find("0.800x"), std::string::npos) << "the numbers are in the message: " << slower;
  EXPECT_EQ(cases[1]["props"]["speedup_vs_expert"], "0.8");
  EXPECT_EQ(cases[2]["name"], "a<b>&\"c'\xEF\xBF\xBD\xEF\xBF\xBD") << "escaped, control and invalid bytes replaced";
  EXPECT_EQ(cases[3]["kinds"][0], "failure");
  EXPECT_EQ(cases[4]["kinds"][0], "error");
  EXPECT_NE(cases[4]["messages"][0].get<std::string>().find("illegal address"), std::string::npos);
  EXPECT_EQ(cases[5]["name"], "beyond the suite");
  EXPECT_EQ(cases[5]["kinds"].size(), 0u);
  EXPECT_EQ(j["suites"][1]["cases"][0]["kinds"][0], "skipped");
  EXPECT_NE(j["suites"][1]["cases"][0]["messages"][0].get<std::string>().find("NVIDIA A100"), std::string::npos);
  EXPECT_EQ(j["suites"][2]["cases"][0]["kinds"][0], "error");
  EXPECT_EQ(j["suites"][3]["cases"][1]["kinds"][0], "failure");
}

TEST(RegressReport, JsonAndTextSayWhatRegressed) {
  RegressReport report = MixedReport();
  EXPECT_EQ(report.Regressions(), 3) << "softmax (slower, wrong), gelu (error), rope (beyond the suite)";
  nlohmann::json j = nlohmann::json::parse(RegressJson(report));
  EXPECT_EQ(j["regressions"], 3);
  ASSERT_EQ(j["seals"].size(), 4u);
  EXPECT_EQ(j["seals"][0]["configs"][1]["class"], "slower");
  EXPECT_EQ(j["seals"][1]["status"], "skipped");
  EXPECT_FALSE(j["seals"][1]["regressed"]);
  EXPECT_EQ(j["seals"][2]["status"], "error");
  EXPECT_TRUE(j["seals"][3]["regressed"]);
  const std::string text = RegressText(report);
  EXPECT_NE(text.find("3 of 4 seal(s) regressed"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped: sealed on NVIDIA A100"), std::string::npos) << text;
}

TEST(RegressReport, XmlEscapeKeepsTextAndReplacesWhatXmlForbids) {
  EXPECT_EQ(XmlEscape("plain 4096^3 \xC3\xA9"), "plain 4096^3 \xC3\xA9");
  EXPECT_EQ(XmlEscape("<a & 'b' \"c\">"), "&lt;a &amp; &#39;b&#39; &quot;c&quot;&gt;");
  EXPECT_EQ(XmlEscape("x\x02y"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(XmlEscape("x\x7Fy"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBF"), "\xEF\xBF\xBD") << "U+FFFF is not a character XML allows";
  EXPECT_EQ(XmlEscape("a\nb"), "a&#10;b");
}

TEST_F(RegressTest, EveryResultIsKeptInTheStoreAsTheNightlyHistory) {
  RegressReport report = MixedReport();
  std::string err;
  ASSERT_TRUE(store_.AddSealChecks(RegressHistoryRows(report), &err)) << err;
  report.check_id = "check2";
  report.started_at = "2026-12-05T03:00:00Z";
  ASSERT_TRUE(store_.AddSealChecks(RegressHistoryRows(report), &err)) << err;
  std::vector<SealCheckRecord> rows;
  ASSERT_TRUE(store_.ListSealChecks("aaaa", "", &rows, &err)) << err;
  ASSERT_EQ(rows.size(), 12u) << "5 configs and the beyond-suite row, twice";
  EXPECT_EQ(rows[0].check_id, "check1");
  EXPECT_EQ(rows[6].check_id, "check2") << "oldest first";
  EXPECT_EQ(rows[1].config, "4096x4096");
  EXPECT_EQ(rows[1].result, "slower");
  EXPECT_DOUBLE_EQ(rows[1].speedup, 0.8);
  EXPECT_EQ(rows[1].device, "NVIDIA H200");
  EXPECT_EQ(rows[5].result, "beyond_suite_ok");
  ASSERT_TRUE(store_.ListSealChecks("", "rmsnorm_bf16", &rows, &err)) << err;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].result, "skipped");
  EXPECT_NE(rows[0].message.find("NVIDIA A100"), std::string::npos);
  SealCheckRecord bad;
  EXPECT_FALSE(store_.AddSealChecks({bad}, &err));
  EXPECT_NE(err.find("check id"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
