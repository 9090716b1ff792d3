// `forgek report` end to end on the CPU: each format on stdout and with -o, and its usage errors,
// on a fixture store (tests/reports/report_fixture.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "report/report_fixture.h"
#include "report/torch_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Operators() { return SourceDir() + "/operators"; }

class CliReport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(report_fixture::MakeStore(dir_.file("store.db"), &ids_, &err)) << err;
  }
  CommandResult Report(std::vector<std::string> args) {
    std::vector<std::string> all = {"--store", dir_.file("store.db"), "--operators", Operators(), "report"};
    all.insert(all.end(), args.begin(), args.end());
    return RunForgek(all);
  }
  TempDir dir_;
  report_fixture::Ids ids_;
};

TEST_F(CliReport, EachFormatGoesToStdout) {
  CommandResult md = Report({});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("# forgek report: the whole store", 0), 0u) << md.out;
  EXPECT_NE(md.out.find("## Scoreboard"), std::string::npos);

  CommandResult json = Report({"--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["seals"][0]["id"], ids_.seal);
  EXPECT_TRUE(j["seals"][0]["roofline"].empty()) << "softmax_t has no folder among the shipped operators";

  CommandResult global_json = RunForgek({"--store", dir_.file("store.db"), "--json", "report", "--op", "gemm_t"});
  ASSERT_EQ(global_json.exit_code, 0) << global_json.err;
  EXPECT_EQ(nlohmann::json::parse(global_json.out)["scope"], "operator gemm_t") << "--json means --format json";

  CommandResult csv = Report({"--format", "csv", "--run", ids_.run1.substr(0, 8)});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("operator,arch,config,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\r\nsoftmax_t,sm90,small,"), std::string::npos) << csv.out;

  CommandResult html = Report({"--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.out.find("<svg"), std::string::npos);
  EXPECT_EQ(html.out.find("<script"), std::string::npos);
}

TEST_F(CliReport, DashOWritesTheFileAndNothingToStdout) {
  CommandResult r = Report({"--format", "html", "-o", dir_.file("report.html")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string html = ReadFile(dir_.file("report.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST_F(CliReport, UsageMistakesExitTwoNamingTheOptionAndWriteNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{"--run", "feedfacefeedface"}, "--run feedfacefeedface"},
      {{"--op", "no_such_operator"}, "no_such_operator"},
      {{"--run", ids_.run1, "--op", "gemm_t"}, "--run"},
      {{"--format", "pdf"}, "pdf"},
      {{"--format", "csv", "-o", dir_.file("missing-folder/r.csv")}, "-o"},
      {{"-o", dir_.path()}, "-o"},
  };
  for (const Case& c : cases) {
    CommandResult r = Report(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.names << "\n" << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  CommandResult both = RunForgek({"--store", dir_.file("store.db"), "--json", "report", "--format", "html"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--json"), std::string::npos) << both.err;
}

TEST_F(CliReport, AnOperatorKnownOnlyByItsFolderIsAnEmptyReportThatSaysSo) {
  CommandResult r = Report({"--op", "softmax_fp32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("holds no run, seal or nightly check of softmax_fp32"), std::string::npos) << r.out;
}

TEST(CliReportStore, AMissingStoreFailsNamingItAndAnEmptyOneIsAnEmptyReport) {
  TempDir dir;
  CommandResult missing = RunForgek({"--store", dir.file("typo.db"), "report"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find(dir.file("typo.db")), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("typo.db"))) << "a report creates no store";
  {
    Store store;
    std::string err;
    ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  CommandResult empty = RunForgek({"--store", dir.file("store.db"), "report", "--format", "html"});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("holds no run, seal or nightly check yet"), std::string::npos) << empty.out;
}

TEST(CliReportHelp, HelpNamesTheFormatsAndShowsExamples) {
  CommandResult r = RunForgek({"report", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--run", "--op", "--format", "-o", "--torch", "compare_torch.py", "html", "csv", "Examples:",
                        "forgek report --op"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// `report --torch`: scripts/compare_torch.py's JSON beside the seals of a store it compared.
class CliReportTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(torch_fixture::MakeStore(dir_.file("store.db"), &err)) << err;
  }
  CommandResult Report(std::vector<std::string> args) {
    std::vector<std::string> all = {"--store", dir_.file("store.db"), "--operators", Operators(), "report"};
    all.insert(all.end(), args.begin(), args.end());
    return RunForgek(all);
  }
  // The fixture comparison with one edit, written to `name`.
  std::string Broken(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(ReadFile(torch_fixture::ResultsPath()));
    edit(j);
    WriteFile(dir_.file(name), j.dump(2));
    return dir_.file(name);
  }
  TempDir dir_;
};

TEST_F(CliReportTorch, EachFormatShowsTheTorchNumbers) {
  const std::string file = torch_fixture::ResultsPath();
  CommandResult json = Report({"--torch", file, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  bool seen = false;
  for (const nlohmann::json& c : j["configs"])
    if (c["operator"] == torch_fixture::kRmsnorm && c["config"] == "16384x4096") {
      seen = true;
      EXPECT_DOUBLE_EQ(c["torch"]["eager_us"].get<double>(), 102);
      EXPECT_DOUBLE_EQ(c["torch"]["compile_us"].get<double>(), 92);
      EXPECT_EQ(c["torch"]["correct"], true);
    }
  EXPECT_TRUE(seen) << json.out;
  EXPECT_EQ(j["torch_comparisons"][0]["file"], file);

  CommandResult md = Report({"--torch", file});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("## Against PyTorch"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| 1.24x | 1.12x | yes |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("compared seal d15pa7c40000, not the newest"), std::string::npos) << md.out;

  CommandResult csv = Report({"--torch", file, "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",torch_eager_us,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",102,92,"), std::string::npos) << csv.out;

  CommandResult html = Report({"--torch", file, "--format", "html", "-o", dir_.file("r.html")});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir_.file("r.html"));
  EXPECT_NE(page.find("Against PyTorch"), std::string::npos);
  // One bar plot, rmsnorm_bf16's: gemm_bf16's comparison has no time to draw.
  EXPECT_NE(page.find("id=\"plot-torch-0\""), std::string::npos);
  EXPECT_NE(page.find("<title id=\"plot-torch-0-title\">Against PyTorch: rmsnorm_bf16</title>"), std::string::npos);
  EXPECT_EQ(page.find("plot-torch-1"), std::string::npos);
  CommandResult plain = Report({"--format", "html"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("plot-torch"), std::string::npos) << "the plot only with --torch";
}

TEST_F(CliReportTorch, AnUnreadableOrMalformedFileExitsOneNamingItAndTheFieldAndWritesNothing) {
  WriteFile(dir_.file("not.json"), "{\"format\": \"forgek-compare-torch/1\", ");
  struct Case {
    std::string file, field;
  };
  const std::vector<Case> cases = {
      {dir_.file("missing.json"), "missing.json"},
      {dir_.path(), dir_.path()},
      {dir_.file("not.json"), "invalid JSON"},
      {Broken("tag.json", [](nlohmann::json& j) { j["format"] = "forgek-report/1"; }), "format"},
      {Broken("numbers.json",
              [](nlohmann::json& j) {
                for (const char* k : {"seal_us", "eager_us", "compile_us"}) j["operators"][0]["configs"][1].erase(k);
              }),
       "operators[0].configs[1].seal_us: missing"},
  };
  for (const Case& c : cases) {
    for (const char* format : {"md", "html"}) {
      CommandResult r = Report({"--torch", torch_fixture::ResultsPath(), "--torch", c.file, "--format", format, "-o",
                                dir_.file(std::string("out.") + format)});
      EXPECT_EQ(r.exit_code, 1) << c.file << "\n" << r.err;
      EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(c.field), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("--torch"), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(dir_.file(std::string("out.") + format))) << "no partial report";
    }
    CommandResult out = Report({"--torch", c.file});
    EXPECT_EQ(out.exit_code, 1) << out.err;
    EXPECT_TRUE(out.out.empty()) << out.out;
  }
}

TEST_F(CliReportTorch, AConfigInTwoFilesIsAUsageMistake) {
  const std::string file = torch_fixture::ResultsPath();
  CommandResult r = Report({"--torch", file, "--torch", file});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--torch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("16384x4096"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  CommandResult bare = Report({"--torch"});
  EXPECT_EQ(bare.exit_code, 2) << "--torch needs a file\n" << bare.err;
}

}  // namespace
}  // namespace forgek
