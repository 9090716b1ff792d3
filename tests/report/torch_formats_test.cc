// `report --torch` in every format, from a store whose seals the fixture comparison timed: JSON and
// CSV read back field by field, the markdown's rows, and the HTML's table and bar plot; a report
// without a comparison shows none of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/utf8_text.h"
#include "forgek/report/report.h"
#include "forgek/report/report_print.h"
#include "report/csv_read.h"
#include "report/markup_check.h"
#include "report/torch_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

class TorchFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(torch_fixture::MakeStore(dir_.file("store.db"), &err_)) << err_;
    Store store;
    ASSERT_TRUE(store.Open(dir_.file("store.db"), &err_, StoreMode::read_only)) << err_;
    ASSERT_TRUE(BuildReport(store, {}, {}, &plain_, &err_)) << err_;
    TorchComparison torch;
    ASSERT_TRUE(ReadTorchComparison(torch_fixture::ResultsPath(), &torch, &err_)) << err_;
    report_ = plain_;
    ASSERT_TRUE(AttachTorchComparisons({torch}, &report_, &err_)) << err_;
  }
  TempDir dir_;
  std::string err_;
  Report plain_, report_;
};

TEST_F(TorchFormats, JsonHasATorchObjectPerConfig) {
  const nlohmann::json j = nlohmann::json::parse(ReportJson(report_));
  std::map<std::string, nlohmann::json> by_config;
  for (const nlohmann::json& c : j["configs"]) by_config[c["config"].get<std::string>()] = c["torch"];
  ASSERT_EQ(by_config.size(), 5u) << j["configs"].dump(1);
  const nlohmann::json& big = by_config["16384x4096"];
  ASSERT_TRUE(big.is_object()) << big;
  EXPECT_EQ(big["file"], torch_fixture::ResultsPath());
  EXPECT_EQ(big["seal"], torch_fixture::kComparedRmsnormSeal);
  EXPECT_TRUE(big["seal_note"].is_null());
  EXPECT_DOUBLE_EQ(big["seal_us"].get<double>(), 82);
  EXPECT_DOUBLE_EQ(big["eager_us"].get<double>(), 102);
  EXPECT_DOUBLE_EQ(big["compile_us"].get<double>(), 92);
  EXPECT_NEAR(big["speedup_vs_eager"].get<double>(), 102.0 / 82, 1e-12);
  EXPECT_NEAR(big["speedup_vs_compile"].get<double>(), 92.0 / 82, 1e-12);
  EXPECT_NEAR(big["eager_noise"].get<double>(), (103.6 - 100.4) / 2 / 102, 1e-12);
  EXPECT_EQ(big["correct"], true);
  EXPECT_TRUE(by_config["128x8192"]["compile_us"].is_null()) << "torch.compile failed on it";
  EXPECT_TRUE(by_config["1x4096"].is_null()) << "a config the file does not time";
  EXPECT_EQ(by_config["4096^3"]["correct"], false);
  EXPECT_EQ(by_config["4096^3"]["seal_note"].get<std::string>().rfind("compared seal d15pa7c40000, not the newest", 0),
            0u);
  EXPECT_TRUE(by_config["8192^3"]["correct"].is_null());
  EXPECT_EQ(by_config["8192^3"]["status"], "not compared");
  ASSERT_EQ(j["torch_comparisons"].size(), 1u);
  EXPECT_EQ(j["torch_comparisons"][0]["device"], "NVIDIA H200");
  EXPECT_EQ(j["torch_comparisons"][0]["torch"], "2.11.0+cu130");

  const nlohmann::json plain = nlohmann::json::parse(ReportJson(plain_));
  EXPECT_TRUE(plain["configs"][0]["torch"].is_null());
  EXPECT_TRUE(plain["torch_comparisons"].empty());
}

TEST_F(TorchFormats, CsvHasTorchColumnsEmptyWhereAbsent) {
  const std::vector<std::vector<std::string>> rows = csv_read::ParseCsv(ReportCsv(report_));
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<std::string>& header = rows[0];
  for (const std::vector<std::string>& r : rows) ASSERT_EQ(r.size(), header.size());
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  auto row = [&](const std::string& config) {
    for (const std::vector<std::string>& r : rows)
      if (r[col("config")] == config) return r;
    ADD_FAILURE() << config;
    return header;
  };
  const std::vector<std::string> big = row("16384x4096");
  EXPECT_EQ(big[col("torch_seal")], torch_fixture::kComparedRmsnormSeal);
  EXPECT_DOUBLE_EQ(std::stod(big[col("torch_seal_us")]), 82);
  EXPECT_DOUBLE_EQ(std::stod(big[col("torch_eager_us")]), 102);
  EXPECT_DOUBLE_EQ(std::stod(big[col("torch_compile_us")]), 92);
  EXPECT_NEAR(std::stod(big[col("torch_speedup_vs_eager")]), 102.0 / 82, 1e-8);
  EXPECT_NEAR(std::stod(big[col("torch_speedup_vs_compile")]), 92.0 / 82, 1e-8);
  EXPECT_EQ(big[col("torch_correct")], "true");
  EXPECT_EQ(row("128x8192")[col("torch_compile_us")], "");
  EXPECT_EQ(row("4096^3")[col("torch_correct")], "false");
  EXPECT_NE(row("4096^3")[col("torch_note")].find("not the newest"), std::string::npos);
  EXPECT_EQ(row("8192^3")[col("torch_correct")], "");
  for (const char* c : {"torch_seal", "torch_seal_us", "torch_eager_us", "torch_compile_us", "torch_correct"})
    EXPECT_EQ(row("1x4096")[col(c)], "") << c;

  const std::vector<std::vector<std::string>> plain = csv_read::ParseCsv(ReportCsv(plain_));
  EXPECT_EQ(plain[0], header) << "the same columns with or without --torch";
  EXPECT_EQ(plain[1][col("torch_eager_us")], "");
}

TEST_F(TorchFormats, MarkdownHasThePyTorchTableBesideTheTimes) {
  const std::string md = ReportMarkdown(report_);
  ASSERT_TRUE(IsValidUtf8(md));
  const size_t times = md.find("## Times per config"), torch = md.find("## Against PyTorch"),
               operators = md.find("## Operators");
  ASSERT_NE(torch, std::string::npos) << md;
  EXPECT_LT(times, torch);
  EXPECT_LT(torch, operators);
  EXPECT_NE(md.find("| rmsnorm_bf16 | 16384x4096 | 5ea1c0ffee00 | 82.00 \xC2\xB1" "2.0% | 102.00 \xC2\xB1"
                    "1.6% | 92.00 \xC2\xB1" "1.7% | 1.24x | 1.12x | yes |  |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| rmsnorm_bf16 | 128x8192 | 5ea1c0ffee00 | 4.00 \xC2\xB1" "10.0% | 16.50 \xC2\xB1"
                    "3.9% | - | 4.12x | - | yes | torch.compile failed: BackendCompilerFailed |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gemm_bf16 | 4096^3 | d15pa7c40000 | - | - | - | - | - | NO | compared seal d15pa7c40000, not "
                    "the newest"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gemm_bf16 | 8192^3 | d15pa7c40000 | - | - | - | - | - | - | not compared; "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("NVIDIA H200, torch 2.11.0+cu130"), std::string::npos);
  EXPECT_NE(md.find("not in this report: histogram_u8"), std::string::npos);
  EXPECT_EQ(ReportMarkdown(plain_).find("PyTorch"), std::string::npos) << "nothing of it without --torch";
}

TEST_F(TorchFormats, HtmlHasTheTableAndABarPlotOnlyWithAComparison) {
  const std::string html = ReportHtml(report_);
  std::vector<markup_check::Element> els;
  std::string err;
  ASSERT_TRUE(markup_check::Parse(html, &els, &err)) << err;
  std::set<std::string> ids;
  int plot = -1;
  for (size_t i = 0; i < els.size(); ++i) {
    auto id = els[i].attrs.find("id");
    if (id == els[i].attrs.end()) continue;
    EXPECT_TRUE(ids.insert(id->second).second) << "duplicate id " << id->second;
    if (els[i].name == "svg" && id->second.rfind("plot-torch-", 0) == 0) {
      EXPECT_EQ(plot, -1) << "one plot: gemm_bf16 has no time to draw";
      plot = static_cast<int>(i);
    }
  }
  EXPECT_TRUE(ids.count("torch-table"));
  ASSERT_GE(plot, 0) << html;
  int bars = 0;
  for (size_t i = 0; i < els.size(); ++i) {
    if (!markup_check::Inside(els, static_cast<int>(i), plot) || els[i].name != "rect" ||
        !els[i].attrs.count("class") || els[i].attrs.at("class") != "mark")
      continue;
    ++bars;
    for (const char* coord : {"x", "y", "width", "height"}) {
      int n = 0;
      EXPECT_TRUE(markup_check::FiniteNumbers(els[i].attrs.at(coord), &n)) << coord;
    }
  }
  EXPECT_EQ(bars, 5) << "seal, eager and compile on 16384x4096; seal and eager on 128x8192";
  EXPECT_NE(html.find("torch eager: 16384x4096, 102"), std::string::npos) << "a bar's tooltip";
  // Cells may break after commas (<wbr/>): the note is searched as a reader sees it.
  std::string seen = html;
  for (size_t at; (at = seen.find("<wbr/>")) != std::string::npos;) seen.erase(at, 6);
  EXPECT_NE(seen.find("compared seal d15pa7c40000, not the newest"), std::string::npos);

  const std::string plain = ReportHtml(plain_);
  EXPECT_EQ(plain.find("plot-torch"), std::string::npos);
  EXPECT_EQ(plain.find("torch-table"), std::string::npos);
}

}  // namespace
}  // namespace forgek
