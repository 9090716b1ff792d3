// Reading scripts/compare_torch.py's JSON (`report --torch`) and setting it beside the report's
// configs: the fixture read field by field, every kind of malformed file refused naming the file and
// the field, and the matching by operator, config and seal.
#include "forgek/report/torch_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "forgek/report/report.h"
#include "report/torch_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

using nlohmann::json;

json Fixture() { return json::parse(ReadFile(torch_fixture::ResultsPath())); }

TEST(TorchCompare, TheFixtureReadsFieldByField) {
  TorchComparison t;
  std::string err;
  ASSERT_TRUE(ReadTorchComparison(torch_fixture::ResultsPath(), &t, &err)) << err;
  EXPECT_EQ(t.source.file, torch_fixture::ResultsPath());
  EXPECT_EQ(t.source.device, "NVIDIA H200");
  EXPECT_EQ(t.source.torch_version, "2.11.0+cu130");
  EXPECT_EQ(t.source.date, "2026-11-30T12:00:00+00:00");
  EXPECT_EQ(t.source.method, "fixture method line");
  ASSERT_EQ(t.operators.size(), 3u);
  const TorchOperator& rms = t.operators[0];
  EXPECT_EQ(rms.op, torch_fixture::kRmsnorm);
  EXPECT_EQ(rms.seal, torch_fixture::kComparedRmsnormSeal);
  ASSERT_EQ(rms.configs.size(), 2u);
  const TorchConfig& big = rms.configs[0];
  EXPECT_EQ(big.config, "16384x4096");
  EXPECT_DOUBLE_EQ(big.seal_us, 82);
  EXPECT_DOUBLE_EQ(big.eager_us, 102);
  EXPECT_DOUBLE_EQ(big.compile_us, 92);
  EXPECT_NEAR(big.seal_noise, (83.6 - 80.4) / 2 / 82, 1e-12);
  EXPECT_NEAR(big.speedup_vs_eager, 102.0 / 82, 1e-12);
  EXPECT_NEAR(big.speedup_vs_compile, 92.0 / 82, 1e-12);
  EXPECT_EQ(big.correct, std::optional<bool>(true));
  EXPECT_EQ(big.status, "compared");
  EXPECT_DOUBLE_EQ(rms.configs[1].compile_us, 0) << "torch.compile failed: null";
  EXPECT_DOUBLE_EQ(rms.configs[1].speedup_vs_compile, 0);
  EXPECT_EQ(t.operators[1].configs[0].correct, std::optional<bool>(false));
  EXPECT_FALSE(t.operators[1].configs[1].correct.has_value()) << "not compared";
  EXPECT_EQ(t.operators[1].configs[1].status, "not compared");
  EXPECT_EQ(t.operators[2].seal, "") << "no seal: null";
  EXPECT_TRUE(t.operators[2].configs.empty());
  EXPECT_EQ(t.operators[2].note, "no seal of histogram_u8 in store.db");
}

// The median (percentile 50, interpolated as the script does) of samples.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double pos = 0.5 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

TEST(TorchCompare, TheFixtureIsTheScriptsOutputForItsOwnFixture) {
  // compare_torch_test.py builds its report from these samples; a change there shows here.
  const json samples = json::parse(ReadFile(SourceDir() + "/tests/fixtures/compare_torch/results.json"));
  const json results = Fixture();
  ASSERT_EQ(samples["operators"].size(), results["operators"].size());
  for (size_t i = 0; i < samples["operators"].size(); ++i) {
    const json& s = samples["operators"][i];
    const json& r = results["operators"][i];
    EXPECT_EQ(s["op"], r["op"]);
    EXPECT_EQ(s["seal"], r["seal"]);
    ASSERT_EQ(s["configs"].size(), r["configs"].size());
    for (size_t k = 0; k < s["configs"].size(); ++k) {
      EXPECT_EQ(s["configs"][k]["config"], r["configs"][k]["config"]);
      EXPECT_EQ(s["configs"][k]["correct"], r["configs"][k]["correct"]);
      for (const char* who : {"seal", "eager", "compile"}) {
        const json& us = s["configs"][k][who];
        const json& median = r["configs"][k][std::string(who) + "_us"];
        if (us.is_null()) {
          EXPECT_TRUE(median.is_null()) << who;
        } else {
          EXPECT_DOUBLE_EQ(Median(us.get<std::vector<double>>()), median.get<double>()) << who;
        }
      }
    }
  }
}

struct Broken {
  std::string what;
  std::function<void(json&)> edit;
  std::string field;  // what the message must name
};

TEST(TorchCompare, AMalformedFileIsRefusedNamingTheFileAndTheField) {
  const std::vector<Broken> cases = {
      {"wrong format tag", [](json& j) { j["format"] = "forgek-compare-torch/2"; },
       "format: \"forgek-compare-torch/2\""},
      {"no format tag", [](json& j) { j.erase("format"); }, "format: missing"},
      {"a report of forgek", [](json& j) { j["format"] = "forgek-report/1"; }, "format"},
      {"no operators", [](json& j) { j.erase("operators"); }, "operators: missing"},
      {"operators not a list", [](json& j) { j["operators"] = json::object(); }, "operators: an array, not object"},
      {"device a number", [](json& j) { j["device"] = 3; }, "device: a string, not number"},
      {"an operator not an object", [](json& j) { j["operators"][1] = "gemm"; }, "operators[1]: an object"},
      {"an operator without a name", [](json& j) { j["operators"][0].erase("op"); }, "operators[0].op: missing"},
      {"an empty operator name", [](json& j) { j["operators"][0]["op"] = ""; }, "operators[0].op: empty"},
      {"a seal id a number", [](json& j) { j["operators"][0]["seal"] = 5; }, "operators[0].seal: a string or null"},
      {"an operator twice", [](json& j) { j["operators"][1]["op"] = "rmsnorm_bf16"; }, "operators[1].op"},
      {"a config without numbers",
       [](json& j) {
         for (const char* k : {"seal_us", "eager_us", "compile_us"}) j["operators"][0]["configs"][0].erase(k);
       },
       "operators[0].configs[0].seal_us: missing"},
      {"a time as text", [](json& j) { j["operators"][0]["configs"][1]["eager_us"] = "16.5"; },
       "operators[0].configs[1].eager_us: a number or null"},
      {"a negative time", [](json& j) { j["operators"][0]["configs"][0]["compile_us"] = -92.0; },
       "operators[0].configs[0].compile_us: a positive number"},
      {"a zero speedup", [](json& j) { j["operators"][0]["configs"][0]["speedup_vs_eager"] = 0; },
       "operators[0].configs[0].speedup_vs_eager"},
      {"no speedup", [](json& j) { j["operators"][0]["configs"][0].erase("speedup_vs_compile"); },
       "operators[0].configs[0].speedup_vs_compile: missing"},
      {"correct as text", [](json& j) { j["operators"][1]["configs"][0]["correct"] = "no"; },
       "operators[1].configs[0].correct: true, false or null"},
      {"no correct", [](json& j) { j["operators"][1]["configs"][1].erase("correct"); },
       "operators[1].configs[1].correct: missing"},
      {"a spread without its noise", [](json& j) { j["operators"][0]["configs"][0]["seal_spread"].erase("rel_noise"); },
       "operators[0].configs[0].seal_spread.rel_noise: missing"},
      {"a config twice", [](json& j) { j["operators"][0]["configs"][1]["config"] = "16384x4096"; },
       "operators[0].configs[1].config: \"16384x4096\" twice"},
      {"a config without a name", [](json& j) { j["operators"][1]["configs"][0]["config"] = nullptr; },
       "operators[1].configs[0].config: a string, not null"},
      {"not an object", [](json& j) { j = json::array(); }, "an object, not array"},
  };
  for (const Broken& c : cases) {
    json j = Fixture();
    c.edit(j);
    TorchComparison t;
    t.source.device = "untouched";
    std::string err;
    EXPECT_FALSE(ParseTorchComparison(j.dump(), "torch.json", &t, &err)) << c.what;
    EXPECT_EQ(err.rfind("torch.json: ", 0), 0u) << c.what << ": " << err;
    EXPECT_NE(err.find(c.field), std::string::npos) << c.what << ": " << err;
    EXPECT_EQ(t.source.device, "untouched") << c.what << ": nothing is set from a refused file";
  }
}

TEST(TorchCompare, TextThatIsNotJsonOrTooDeepIsRefusedWithoutAThrow) {
  for (const std::string& text : {std::string("{\"format\": "), std::string("not json"), std::string(""),
                                  std::string(100000, '[') + std::string(100000, ']')}) {
    TorchComparison t;
    std::string err;
    EXPECT_FALSE(ParseTorchComparison(text, "r.json", &t, &err));
    EXPECT_EQ(err.rfind("r.json: ", 0), 0u) << err;
  }
}

TEST(TorchCompare, AFileThatCannotBeReadIsRefusedNamingIt) {
  TempDir dir;
  TorchComparison t;
  std::string err;
  EXPECT_FALSE(ReadTorchComparison(dir.file("missing.json"), &t, &err));
  EXPECT_NE(err.find(dir.file("missing.json")), std::string::npos) << err;
  EXPECT_FALSE(ReadTorchComparison(dir.path(), &t, &err)) << "a folder";
  EXPECT_NE(err.find(dir.path()), std::string::npos) << err;
}

class TorchAttach : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(torch_fixture::MakeStore(dir_.file("store.db"), &err_)) << err_;
    Store store;
    ASSERT_TRUE(store.Open(dir_.file("store.db"), &err_, StoreMode::read_only)) << err_;
    ASSERT_TRUE(BuildReport(store, {}, {}, &report_, &err_)) << err_;
    ASSERT_TRUE(ReadTorchComparison(torch_fixture::ResultsPath(), &torch_, &err_)) << err_;
  }
  const ConfigRow* Row(const Report& r, const std::string& op, const std::string& config) {
    for (const ConfigRow& c : r.configs)
      if (c.op == op && c.config == config) return &c;
    return nullptr;
  }
  TempDir dir_;
  std::string err_;
  Report report_;
  TorchComparison torch_;
};

TEST_F(TorchAttach, EachConfigGetsItsNumbersAndAnotherSealANote) {
  ASSERT_TRUE(AttachTorchComparisons({torch_}, &report_, &err_)) << err_;
  const ConfigRow* big = Row(report_, torch_fixture::kRmsnorm, "16384x4096");
  ASSERT_NE(big, nullptr);
  ASSERT_TRUE(big->torch.has_value());
  EXPECT_DOUBLE_EQ(big->torch->numbers.eager_us, 102);
  EXPECT_EQ(big->torch->seal, torch_fixture::kComparedRmsnormSeal);
  EXPECT_EQ(big->torch->note, "") << "the file's 12-character id is the start of the report's seal";
  EXPECT_EQ(big->torch->file, torch_fixture::ResultsPath());
  const ConfigRow* small = Row(report_, torch_fixture::kRmsnorm, "128x8192");
  ASSERT_NE(small, nullptr);
  ASSERT_TRUE(small->torch.has_value());
  EXPECT_DOUBLE_EQ(small->torch->numbers.compile_us, 0);
  const ConfigRow* other = Row(report_, torch_fixture::kRmsnorm, "1x4096");
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->torch.has_value()) << "a config the file does not time";
  const ConfigRow* gemm = Row(report_, torch_fixture::kGemm, "4096^3");
  ASSERT_NE(gemm, nullptr);
  ASSERT_TRUE(gemm->torch.has_value());
  const std::string note = std::string("compared seal ") + torch_fixture::kComparedGemmSeal + ", not the newest";
  EXPECT_EQ(gemm->torch->note.rfind(note, 0), 0u) << gemm->torch->note;
  EXPECT_EQ(gemm->torch->numbers.correct, std::optional<bool>(false));
  ASSERT_EQ(report_.torch.size(), 1u);
  EXPECT_EQ(report_.torch[0].device, "NVIDIA H200");
  const bool listed = std::any_of(report_.notes.begin(), report_.notes.end(), [](const std::string& n) {
    return n.find("not in this report: histogram_u8") != std::string::npos;
  });
  EXPECT_TRUE(listed) << "an operator of the file that the report does not show is named";
}

TEST_F(TorchAttach, AConfigInTwoComparisonsIsRefusedAndTheReportUntouched) {
  TorchComparison again = torch_;
  again.source.file = "second.json";
  const size_t notes = report_.notes.size();
  EXPECT_FALSE(AttachTorchComparisons({torch_, again}, &report_, &err_));
  EXPECT_NE(err_.find("second.json"), std::string::npos) << err_;
  EXPECT_NE(err_.find(torch_fixture::ResultsPath()), std::string::npos) << err_;
  EXPECT_EQ(report_.notes.size(), notes);
  EXPECT_TRUE(report_.torch.empty());
  for (const ConfigRow& c : report_.configs) EXPECT_FALSE(c.torch.has_value()) << c.op << " " << c.config;
}

TEST_F(TorchAttach, ComparisonsOfDifferentOperatorsAddUp) {
  TorchComparison rms = torch_, gemm = torch_;
  rms.operators.resize(1);
  gemm.operators.erase(gemm.operators.begin());
  gemm.source.file = "gemm.json";
  ASSERT_TRUE(AttachTorchComparisons({rms, gemm}, &report_, &err_)) << err_;
  EXPECT_EQ(report_.torch.size(), 2u);
  EXPECT_TRUE(Row(report_, torch_fixture::kRmsnorm, "16384x4096")->torch.has_value());
  EXPECT_EQ(Row(report_, torch_fixture::kGemm, "8192^3")->torch->file, "gemm.json");
}

}  // namespace
}  // namespace forgek
