// Seals on the CPU: finding by id and prefix, the exported folder (what a driver-API-only loader
// reads), the side-by-side diff and the record a sealing builds. The decision rule is tested in
// tests/verdict/verdict_test.cc (DecideSeal, DecideVerify).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/seal/seal.h"
#include "run/scripted_evaluator.h"
#include "softmax_seal_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

class SealTest : public SoftmaxSealFixture {
 protected:
  void SetUp() override {
    SoftmaxSealFixture::SetUp();
    candidate_ = AddCandidate("cand-softmax-seed", SeedSource());
  }

  // A seal of the seed whose configs are timed first_us, 2 first_us, 4 first_us, ...
  SealRecord Seal(const std::string& id, const std::string& parent, double first_us) {
    SealRecord s = NewSeal(id, candidate_.hash);
    s.parent = parent;
    s.toolchain = "nvrtc test";
    s.driver.clear();
    for (const ConfigSpec& c : op_.configs) s.config_us[c.name] = first_us, first_us *= 2;
    s.geomean_speedup = 1.25;
    return StoreSeal(s);
  }

  CandidateRecord candidate_;
};

TEST_F(SealTest, FindsByFullIdAndUniquePrefix) {
  Seal("abcd1111aaaa", "", 10);
  Seal("abcd2222bbbb", "", 20);
  SealRecord found;
  std::string err;
  ASSERT_TRUE(FindSeal(store_, "abcd1111aaaa", &found, &err)) << err;
  EXPECT_EQ(found.id, "abcd1111aaaa");
  ASSERT_TRUE(FindSeal(store_, "abcd2", &found, &err)) << err;
  EXPECT_EQ(found.id, "abcd2222bbbb");
  EXPECT_EQ(found.config_us.size(), op_.configs.size());
}

TEST_F(SealTest, AnAmbiguousPrefixNamesBothSeals) {
  Seal("abcd1111aaaa", "", 10);
  Seal("abcd2222bbbb", "", 20);
  SealRecord found;
  std::string err;
  EXPECT_FALSE(FindSeal(store_, "abcd", &found, &err));
  EXPECT_NE(err.find("ambiguous"), std::string::npos) << err;
  EXPECT_NE(err.find("abcd1111aaaa"), std::string::npos) << err;
  EXPECT_NE(err.find("abcd2222bbbb"), std::string::npos) << err;
}

TEST_F(SealTest, AnUnknownOrTooShortIdIsAnError) {
  Seal("abcd1111aaaa", "", 10);
  SealRecord found;
  std::string err;
  EXPECT_FALSE(FindSeal(store_, "ffff", &found, &err));
  EXPECT_NE(err.find("no seal 'ffff'"), std::string::npos) << err;
  EXPECT_NE(err.find(store_.path()), std::string::npos) << "the error names the store: " << err;
  err.clear();
  EXPECT_FALSE(FindSeal(store_, "abc", &found, &err));
  EXPECT_NE(err.find("at least 4 characters"), std::string::npos) << err;
}

TEST_F(SealTest, DiffShowsParamsTimesAndLineage) {
  SealRecord a = Seal("aaaa0000parent", "", 10);
  SealRecord b = Seal("bbbb0000child", a.id, 5);
  std::string text = SealDiffText(store_, a, b);
  EXPECT_NE(text.find("param THREADS"), std::string::npos) << text;
  const std::string first = op_.configs[0].name;
  EXPECT_NE(text.find("time " + first), std::string::npos) << text;
  EXPECT_NE(text.find("10.00 us"), std::string::npos) << text;
  EXPECT_NE(text.find("5.00 us"), std::string::npos) << text;
  EXPECT_NE(text.find("(b is 2.000x a)"), std::string::npos) << text;
  EXPECT_NE(text.find("b descends from a"), std::string::npos) << text;
  EXPECT_EQ(text.find("a descends from b"), std::string::npos) << text;
}

// What a program with the CUDA driver API alone needs: the cubin (an ELF that holds each launched
// kernel), and per config the tensors, scalars and launches with every expression evaluated.
TEST_F(SealTest, ExportWritesAFolderADriverApiLoaderCanUse) {
  CompilerOptions copts;
  copts.threads = 1;  // no cache_dir: uncached
  Compiler compiler(copts);
  CompileResult compiled = compiler.CompileNow({"kernel.cu", candidate_.source, "sm90", ParamDefines(params_)});  // as ExportSeal names it
  ASSERT_TRUE(compiled.ok) << compiled.Summary();
  SealRecord parent = Seal("pppp0000parent", "", 40);
  SealRecord s;
  s.id = "eeee0000export";
  s.operator_name = op_.name;
  s.arch = "sm90";
  s.candidate_hash = candidate_.hash;
  s.params_json = candidate_.params_json;
  s.parent = parent.id;
  s.cubin_sha256 = Sha256Hex(compiled.cubin);
  for (const ConfigSpec& c : op_.configs) s.config_us[c.name] = 12.5;
  s.created_at = NowIso8601();
  std::string err;
  ASSERT_TRUE(store_.AddSeal(s, &err)) << err;

  const std::string dir = tmp_.file("export");
  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, dir, false, &err)) << err;
  for (const char* f : {"kernel.cu", "kernel.cubin", "launch.json", "seal.json", "README.md"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / f)) << f;
  const std::string cubin = ReadFile(dir + "/kernel.cubin");
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(Sha256Hex(cubin), s.cubin_sha256);
  // kernel.cu stands alone: the device library code the seed includes is expanded into it.
  EXPECT_EQ(ReadFile(dir + "/kernel.cu"), ExpandedSource(candidate_.source));
  EXPECT_EQ(ReadFile(dir + "/kernel.cu").find("#include <forgek/"), std::string::npos);

  nlohmann::json launch = nlohmann::json::parse(ReadFile(dir + "/launch.json"));
  EXPECT_EQ(launch.value("format", ""), "forgek-seal-launch/1");
  EXPECT_EQ(launch.value("operator", ""), op_.name);
  // No device at export: the launches are for sm90's nominal SM count, which the seed never reads.
  EXPECT_EQ(launch.value("num_sms", 0), 132);
  EXPECT_EQ(launch.value("reads_num_sms", true), false);
  EXPECT_EQ(launch["params"]["THREADS"], 256);
  ASSERT_EQ(launch["configs"].size(), op_.configs.size());
  for (size_t i = 0; i < op_.configs.size(); ++i) {
    const ConfigSpec& config = op_.configs[i];
    const nlohmann::json& c = launch["configs"][i];
    SCOPED_TRACE(config.name);
    EXPECT_EQ(c.value("config", ""), config.name);
    std::set<std::string> tensors;
    for (const nlohmann::json& t : c["tensors"]) {
      tensors.insert(t.value("name", ""));
      EXPECT_EQ(t.value("dtype", ""), "f32");
      ASSERT_EQ(t["shape"].size(), 2u);
      EXPECT_EQ(t["shape"][0].get<int64_t>(), config.values.at("M"));
      EXPECT_EQ(t["shape"][1].get<int64_t>(), config.values.at("N"));
    }
    EXPECT_EQ(tensors, (std::set<std::string>{"x", "y"}));
    ASSERT_EQ(c["launches"].size(), 1u);
    const nlohmann::json& l = c["launches"][0];
    const std::string kernel = l.value("kernel", "");
    EXPECT_NE(cubin.find(kernel), std::string::npos) << kernel << " is not a symbol of the cubin";
    EXPECT_EQ(l["grid"][0].get<int64_t>(), config.values.at("M"));  // grid ["M"], evaluated
    EXPECT_EQ(l["block"][0].get<int64_t>(), 256);                     // block ["THREADS"]
    ASSERT_EQ(l["args"].size(), 4u);
    EXPECT_EQ(l["args"][0].value("kind", ""), "tensor");
    EXPECT_EQ(l["args"][0].value("name", ""), "x");
    EXPECT_EQ(l["args"][1].value("name", ""), "y");
    const std::string int_kind = l["args"][2].value("kind", "");
    EXPECT_TRUE(int_kind == "i32" || int_kind == "i64") << int_kind;
    EXPECT_EQ(l["args"][2]["value"].get<int64_t>(), config.values.at("M"));
    EXPECT_EQ(l["args"][3]["value"].get<int64_t>(), config.values.at("N"));
  }
  nlohmann::json meta = nlohmann::json::parse(ReadFile(dir + "/seal.json"));
  EXPECT_EQ(meta.value("id", ""), s.id);
  EXPECT_NE(meta.dump().find(parent.id), std::string::npos) << "the lineage names the parent: " << meta.dump();
}

TEST_F(SealTest, ExportRefusesAFolderThatIsNotEmpty) {
  SealRecord s = Seal("ffff0000full", "", 10);
  fs::create_directories(tmp_.file("full"));
  std::ofstream(tmp_.file("full/keep.txt")) << "mine";
  CompilerOptions copts;
  copts.threads = 1;  // no cache_dir: uncached
  Compiler compiler(copts);
  std::string err;
  EXPECT_FALSE(ExportSeal(store_, s, op_, compiler, tmp_.file("full"), true, &err));
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(ReadFile(tmp_.file("full/keep.txt")), "mine") << "nothing of the folder changes";
}

// DIR a symbolic link to an empty folder: the export goes into that folder and the link stays a
// link (the rename of the finished export used to replace the link itself with a new folder).
TEST_F(SealTest, ExportThroughALinkFillsTheFolderItPointsTo) {
  SealRecord s = Seal("1111000link", "", 10);
  fs::create_directories(tmp_.file("real"));
  fs::create_directory_symlink(tmp_.file("real"), tmp_.file("link"));
  fs::create_directories(tmp_.file("real2"));
  fs::create_directory_symlink("real2", tmp_.file("rel_link"));  // relative, given with a trailing slash
  CompilerOptions copts;
  copts.threads = 1;  // no cache_dir: uncached
  Compiler compiler(copts);
  const std::vector<std::pair<std::string, std::string>> cases = {{tmp_.file("link"), tmp_.file("real")},
                                                                   {tmp_.file("rel_link") + "/", tmp_.file("real2")}};
  for (const auto& [given, real] : cases) {
    SCOPED_TRACE(given);
    std::string err;
    ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, given, true, &err)) << err;
    const std::string link = given.back() == '/' ? given.substr(0, given.size() - 1) : given;
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link))) << "the link stays a link";
    for (const char* f : {"kernel.cu", "kernel.cubin", "launch.json", "seal.json", "README.md"}) {
      EXPECT_TRUE(fs::is_regular_file(fs::path(real) / f)) << f;
      EXPECT_TRUE(fs::is_regular_file(fs::path(link) / f)) << f;
    }
  }
  for (const auto& e : fs::directory_iterator(tmp_.path()))
    EXPECT_EQ(e.path().filename().string().rfind(".forgek-export-", 0), std::string::npos) << e.path();
}

TEST_F(SealTest, ExportRefusesALinkToNothing) {
  SealRecord s = Seal("2222000dangling", "", 10);
  fs::create_symlink(tmp_.file("gone"), tmp_.file("dangling"));
  CompilerOptions copts;
  copts.threads = 1;
  Compiler compiler(copts);
  std::string err;
  EXPECT_FALSE(ExportSeal(store_, s, op_, compiler, tmp_.file("dangling"), true, &err));
  EXPECT_NE(err.find(tmp_.file("dangling") + " is a symbolic link to " + tmp_.file("gone") + ", which does not exist"),
            std::string::npos)
      << err;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(tmp_.file("dangling"))));
  EXPECT_FALSE(fs::exists(tmp_.file("gone")));
}

// Seal verify: the seal rebuilt from the store and measured against the expert reference through
// the evaluator it is given; the verdict is DecideVerify's, the report names every config.
SealVerification VerifyWith(Store& store, const OperatorSpec& op, const SealRecord& s, double seal_us,
                            double expert_us) {
  ScriptedEvaluator evaluator([&](const KernelUnderTest& k, const std::string&) {
    return k.params.count("THREADS") ? seal_us : expert_us;
  });
  CompilerOptions copts;
  copts.threads = 1;
  Compiler compiler(copts);
  SealVerification v = VerifySeal(evaluator, store, compiler, op, s);
  // One timed measurement of every config, then (the operator declares ranges) the correctness of
  // the kernel on shapes outside the suite.
  EXPECT_EQ(evaluator.requests.size(), op.ranges.empty() ? 1u : 2u);
  if (evaluator.requests.size() == 2) {
    EXPECT_FALSE(evaluator.requests[1].time) << "outside the suite: correctness only";
  }
  if (!evaluator.requests.empty()) {
    EXPECT_FALSE(evaluator.requests[0].candidate.cubin.empty()) << "the seal is rebuilt from its source";
    EXPECT_FALSE(evaluator.requests[0].golden.cubin.empty()) << "checked against the golden";
  }
  return v;
}

TEST_F(SealTest, VerifyHoldsWhenNoConfigIsSlowerThanTheExpert) {
  SealRecord s = Seal("vvvv0000holds", "", 10);
  SealVerification v = VerifyWith(store_, op_, s, 10.0, 10.0);
  EXPECT_EQ(v.status, SealVerification::Status::holds) << v.text;
  EXPECT_NE(v.text.find("holds"), std::string::npos) << v.text;
  nlohmann::json j = nlohmann::json::parse(v.json);
  EXPECT_TRUE(j.value("ok", false));
  EXPECT_EQ(j["configs"].size(), op_.configs.size());
  EXPECT_EQ(j.value("device", ""), "Scripted GPU");
}

TEST_F(SealTest, VerifyFindsARegressionAgainstTheExpert) {
  SealRecord s = Seal("vvvv0000slower", "", 10);
  SealVerification v = VerifyWith(store_, op_, s, 12.0, 10.0);  // 0.83x the expert, noise 0.7%
  EXPECT_EQ(v.status, SealVerification::Status::regression) << v.text;
  EXPECT_NE(v.text.find("REGRESSION"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("SLOWER"), std::string::npos) << v.text;
  EXPECT_FALSE(nlohmann::json::parse(v.json).value("ok", true));
}

TEST_F(SealTest, VerifyFailsWhenTheStoreLacksTheCandidate) {
  SealRecord s = Seal("vvvv0000orphan", "", 10);
  s.candidate_hash = "not-in-the-store";
  ScriptedEvaluator evaluator([](const KernelUnderTest&, const std::string&) { return 1.0; });
  CompilerOptions copts;
  copts.threads = 1;
  Compiler compiler(copts);
  SealVerification v = VerifySeal(evaluator, store_, compiler, op_, s);
  EXPECT_EQ(v.status, SealVerification::Status::failure);
  EXPECT_NE(v.text.find("not-in-the-store"), std::string::npos) << v.text;
  EXPECT_TRUE(evaluator.requests.empty()) << "nothing is measured";
}

// The record of a sealing carries the verdict's geomean and per-config times of the confirmation.
TEST(BuildSealRecord, TakesTimesFromTheConfirmationAndTheGeomeanFromTheVerdict) {
  EvalResult confirmation;
  confirmation.outcome = Outcome::faster;
  for (auto [name, inc, cand] : {std::tuple{"a", 10.0, 8.0}, std::tuple{"b", 20.0, 16.0}}) {
    ConfigResult c;
    c.config = name;
    c.correctness.ok = true;
    c.incumbent.median_us = inc;
    c.incumbent.rel_noise = 0.005;
    c.candidate.median_us = cand;
    c.candidate.rel_noise = 0.005;
    confirmation.configs.push_back(c);
  }
  SealVerdict verdict = DecideSeal(confirmation, 2, 0.02);
  ASSERT_TRUE(verdict.seal) << verdict.reason;
  SealOrigin origin;
  origin.operator_name = "softmax_fp32";
  origin.arch = "sm90";
  origin.candidate_hash = "c1";
  origin.params = {{"ROWS", 4}};
  origin.family = "families/row_per_warp.cu";
  origin.mechanisms = {"warp_shuffle_reduction"};
  origin.parent = "p1";
  origin.run_id = "r1";
  SealRecord s = BuildSealRecord(origin, confirmation, verdict);
  EXPECT_EQ(s.id.size(), 64u);
  EXPECT_EQ(s.params_json, "{\"ROWS\":4}");
  EXPECT_EQ(s.parent, "p1");
  EXPECT_DOUBLE_EQ(s.config_us.at("a"), 8.0);
  EXPECT_DOUBLE_EQ(s.config_us.at("b"), 16.0);
  EXPECT_DOUBLE_EQ(s.geomean_speedup, verdict.comparison.speedup);
  EXPECT_NEAR(s.geomean_speedup, 1.25, 1e-12);
  nlohmann::json meta = nlohmann::json::parse(s.metadata_json);
  EXPECT_EQ(meta.value("verdict", ""), verdict.reason);
  EXPECT_EQ(meta["configs"].size(), 2u);
}

}  // namespace
}  // namespace forgek
