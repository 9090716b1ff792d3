// Every format of the report from one fixture store: JSON and CSV read back field by field, the
// markdown's rows, and the HTML as well-formed markup whose every <svg> has an id and marks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/utf8_text.h"
#include "forgek/report/report.h"
#include "forgek/report/report_print.h"
#include "report/csv_read.h"
#include "report/markup_check.h"
#include "report/report_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

class ReportFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(report_fixture::MakeStore(dir_.file("store.db"), &ids_, &err_)) << err_;
    Store store;
    ASSERT_TRUE(store.Open(dir_.file("store.db"), &err_, StoreMode::read_only)) << err_;
    ASSERT_TRUE(BuildReport(store, {}, report_fixture::Specs(), &report_, &err_)) << err_;
  }
  TempDir dir_;
  std::string err_;
  report_fixture::Ids ids_;
  Report report_;
};

TEST_F(ReportFormats, JsonCarriesEveryFieldAndReadsBack) {
  const std::string text = ReportJson(report_);
  ASSERT_TRUE(IsValidUtf8(text));
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "forgek-report/1");
  EXPECT_EQ(j["scope"], "the whole store");
  EXPECT_EQ(j["empty"], false);
  ASSERT_EQ(j["configs"].size(), 3u);
  const nlohmann::json& small = j["configs"][0];
  EXPECT_EQ(small["operator"], report_fixture::kSoftmax);
  EXPECT_EQ(small["arch"], "sm90");
  EXPECT_EQ(small["config"], "small");
  EXPECT_NEAR(small["expert_us"].get<double>(), 10.1, 1e-9);
  EXPECT_TRUE(small["expert_noise"].is_null()) << "a nightly check gives no noise of the expert alone";
  EXPECT_NEAR(small["incumbent_us"].get<double>(), 7.1, 1e-9);
  EXPECT_NEAR(small["incumbent_noise"].get<double>(), 0.015, 1e-9);
  EXPECT_NEAR(small["best_us"].get<double>(), 7, 1e-9);
  EXPECT_NEAR(small["speedup_vs_expert"].get<double>(), 10.1 / 7.1, 1e-9);
  EXPECT_NEAR(small["sol_pct"].get<double>(), 39.5, 1e-9);
  EXPECT_EQ(small["attempts"], 4);
  EXPECT_EQ(small["seal"], ids_.seal);
  EXPECT_EQ(small["mechanisms"][1], report_fixture::kHostileMechanism);
  const nlohmann::json& gemm = j["configs"][2];
  EXPECT_TRUE(gemm["seal"].is_null());
  EXPECT_NEAR(gemm["expert_us"].get<double>(), 120, 1e-9);
  EXPECT_TRUE(gemm["floor_us"].is_number());

  ASSERT_EQ(j["operators"].size(), 2u);
  EXPECT_EQ(j["operators"][0]["attempts"], 5);
  EXPECT_NEAR(j["operators"][0]["cost_usd"].get<double>(), 0.25, 1e-12);
  EXPECT_EQ(j["operators"][0]["tokens"], 1200);

  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["id"], ids_.run1);
  ASSERT_EQ(j["runs"][0]["convergence"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["convergence"][2]["attempt"], 4);
  EXPECT_NEAR(j["runs"][0]["convergence"][2]["best_us"].get<double>(), std::sqrt(7.0 * 38), 1e-9);
  EXPECT_TRUE(j["runs"][2]["seal"].is_null());

  ASSERT_EQ(j["seals"].size(), 1u);
  EXPECT_EQ(j["seals"][0]["roofline"].size(), 2u);
  EXPECT_NEAR(j["seals"][0]["roofline"][0]["intensity_flop_per_byte"].get<double>(), 0.625, 1e-12);
  ASSERT_EQ(j["devices"].size(), 1u);
  EXPECT_NEAR(j["devices"][0]["ceilings"][0]["tflops"].get<double>(), 494, 1e-9);
  ASSERT_EQ(j["nightly"].size(), 1u);
  EXPECT_EQ(j["nightly"][0]["checks"].size(), 5u);
  EXPECT_TRUE(j["nightly"][0]["checks"][4]["config"].is_null()) << "a row about the whole seal";
  ASSERT_EQ(j["knowledge"].size(), 3u);
  EXPECT_EQ(j["knowledge"][1]["run"], ids_.run2);
  int known = 0;
  for (const auto& [verdict, n] : j["knowledge"][2]["known"].items()) known += n.get<int>();
  EXPECT_EQ(known, 2);
}

TEST_F(ReportFormats, CsvIsOneRowPerConfigAndReadsBack) {
  const std::string text = ReportCsv(report_);
  std::vector<std::vector<std::string>> rows = csv_read::ParseCsv(text);
  ASSERT_EQ(rows.size(), 4u) << text;
  const std::vector<std::string>& header = rows[0];
  for (const std::vector<std::string>& r : rows) ASSERT_EQ(r.size(), header.size()) << text;
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  const std::vector<std::string>& small = rows[1];
  EXPECT_EQ(small[col("operator")], report_fixture::kSoftmax);
  EXPECT_EQ(small[col("config")], "small");
  EXPECT_NEAR(std::stod(small[col("expert_us")]), 10.1, 1e-9);
  EXPECT_NEAR(std::stod(small[col("incumbent_us")]), 7.1, 1e-9);
  EXPECT_NEAR(std::stod(small[col("best_us")]), 7, 1e-9);
  EXPECT_NEAR(std::stod(small[col("speedup_vs_expert")]), 10.1 / 7.1, 1e-6);
  EXPECT_EQ(small[col("kernel")], std::string(report_fixture::kHostileFamily) + " VEC=4")
      << "a comma and a quote survive the quoting";
  EXPECT_EQ(small[col("mechanisms")], std::string("vector_16B;") + report_fixture::kHostileMechanism);
  EXPECT_EQ(small[col("seal")], ids_.seal);
  EXPECT_EQ(small[col("attempts")], "4");
  EXPECT_EQ(small[col("operator_attempts")], "5");
  EXPECT_NEAR(std::stod(small[col("operator_cost_usd")]), 0.25, 1e-12);
  const std::vector<std::string>& gemm = rows[3];
  EXPECT_EQ(gemm[col("operator")], report_fixture::kGemm);
  EXPECT_EQ(gemm[col("seal")], "");
  EXPECT_EQ(gemm[col("note")], "not sealed: --no-seal");
  EXPECT_EQ(gemm[col("operator_cost_usd")], "") << "no spend is unknown spend in a CSV cell";
}

TEST_F(ReportFormats, MarkdownHasTheScoreboardAndEverySection) {
  const std::string md = ReportMarkdown(report_);
  ASSERT_TRUE(IsValidUtf8(md));
  EXPECT_EQ(md.rfind("# forgek report: the whole store", 0), 0u);
  for (const char* section : {"## Scoreboard", "## Times per config", "## Operators", "## Runs", "## Seals",
                              "## Device bounds", "## Nightly history", "## Knowledge over time"})
    EXPECT_NE(md.find(section), std::string::npos) << section;
  // The scoreboard's row, as batch --all writes it: the family's pipe escaped so the row keeps its
  // cells, the mechanism's tag escaped for renderers that pass inline HTML through.
  EXPECT_NE(md.find("| softmax_t | small | 10.10 | 7.10 | 1.423x | 39.5 | - | 2.50 | families/v\"e,c\\|x.cu VEC=4 | "
                    "vector_16B, &lt;script&gt;alert(1)&lt;/script&gt; |  |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gemm_t | 1024^3 | 120.00 | 120.00 | 1.000x | 58.3 | - | 2.50 | expert reference | - | "
                    "not sealed: --no-seal |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| softmax_t | sm90 | small | 10.10 | 7.10 \xC2\xB1" "1.5% | 7.00 \xC2\xB1" "3.0% | 1.443x | 4 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(ids_.run1.substr(0, 12)), std::string::npos);
  EXPECT_NE(md.find("small: 0.625 FLOP/B"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script"), std::string::npos);
}

TEST_F(ReportFormats, HtmlIsOneWellFormedFileWithoutScriptAndEveryPlotHasMarks) {
  const std::string html = ReportHtml(report_);
  ASSERT_TRUE(IsValidUtf8(html));
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  EXPECT_EQ(lower.find("<script"), std::string::npos) << "the hostile mechanism is escaped, and no script is written";
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(lower.find("<link"), std::string::npos);
  EXPECT_EQ(lower.find("<img"), std::string::npos);
  EXPECT_EQ(lower.find("url("), std::string::npos);
  EXPECT_EQ(lower.find("@import"), std::string::npos);

  std::vector<markup_check::Element> els;
  std::string err;
  ASSERT_TRUE(markup_check::Parse(html, &els, &err)) << err;
  std::set<std::string> ids;
  std::vector<int> svgs;
  for (size_t i = 0; i < els.size(); ++i) {
    const markup_check::Element& e = els[i];
    EXPECT_EQ(e.attrs.count("src"), 0u) << e.name << ": nothing is fetched";
    EXPECT_EQ(e.attrs.count("href"), 0u) << e.name;
    for (const auto& [k, v] : e.attrs) EXPECT_NE(k.rfind("on", 0), 0u) << "no event handler: " << k;
    if (e.attrs.count("id")) {
      EXPECT_TRUE(ids.insert(e.attrs.at("id")).second) << "duplicate id " << e.attrs.at("id");
    }
    if (e.name == "svg") svgs.push_back(static_cast<int>(i));
    for (const char* coord : {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points"}) {
      auto a = e.attrs.find(coord);
      if (a == e.attrs.end() || e.name == "table") continue;
      int n = 0;
      EXPECT_TRUE(markup_check::FiniteNumbers(a->second, &n)) << e.name << " " << coord << "=" << a->second;
      EXPECT_GT(n, 0) << e.name << " " << coord;
    }
  }
  // Convergence, one roofline, one nightly plot, knowledge.
  ASSERT_EQ(svgs.size(), 4u);
  std::set<std::string> svg_ids;
  for (int s : svgs) {
    ASSERT_EQ(els[s].attrs.count("id"), 1u);
    svg_ids.insert(els[s].attrs.at("id"));
    int marks = 0;
    for (size_t i = 0; i < els.size(); ++i)
      if (markup_check::Inside(els, static_cast<int>(i), s) &&
          ((els[i].name == "circle" && els[i].attrs.count("class") && els[i].attrs.at("class") == "mark") ||
           els[i].name == "polyline"))
        ++marks;
    EXPECT_GT(marks, 0) << els[s].attrs.at("id");
  }
  EXPECT_EQ(svg_ids,
            (std::set<std::string>{"plot-convergence", "plot-roofline-0", "plot-nightly-0", "plot-knowledge"}));
  EXPECT_NE(html.find("<meta charset=\"utf-8\"/>"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos) << "inline CSS";
  // Every cell under a "note" header, and only those, is a note cell (a column wide enough for prose).
  int note_cells = 0;
  for (size_t i = 0; i < els.size(); ++i) {
    if (els[i].name != "td") continue;
    const bool note = els[i].attrs.count("class") && els[i].attrs.at("class") == "note";
    note_cells += note;
  }
  int note_headers_rows = 0;  // body rows of the tables that have a note column
  for (size_t at = 0; (at = html.find("<table id=", at)) != std::string::npos; ++at) {
    const std::string table = html.substr(at, html.find("</table>", at) - at);
    if (table.find("<th>note</th>") == std::string::npos) continue;
    for (size_t p = table.find("<tbody>"); (p = table.find("<tr>", p + 1)) != std::string::npos;) ++note_headers_rows;
  }
  EXPECT_GT(note_cells, 0);
  EXPECT_EQ(note_cells, note_headers_rows) << "one note cell per row of each table with a note column";
  EXPECT_NE(html.find("td.note{min-width:"), std::string::npos);
}

TEST_F(ReportFormats, EachFormatHasItsPrinterAndName) {
  ReportFormat f = ReportFormat::markdown;
  for (const auto& [name, format] : {std::pair<const char*, ReportFormat>{"md", ReportFormat::markdown},
                                     {"markdown", ReportFormat::markdown},
                                     {"json", ReportFormat::json},
                                     {"csv", ReportFormat::csv},
                                     {"html", ReportFormat::html}}) {
    ASSERT_TRUE(ParseReportFormat(name, &f)) << name;
    EXPECT_EQ(f, format);
  }
  EXPECT_FALSE(ParseReportFormat("pdf", &f));
  EXPECT_EQ(PrintReport(report_, ReportFormat::csv), ReportCsv(report_));
  EXPECT_EQ(PrintReport(report_, ReportFormat::html), ReportHtml(report_));
}

TEST(ReportFormatsEmpty, AnEmptyReportSaysSoInEveryFormat) {
  Report r;
  r.scope = "the whole store";
  r.notes = {"the store holds no run, seal or nightly check yet"};
  EXPECT_NE(ReportMarkdown(r).find("holds no run"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(ReportJson(r));
  EXPECT_EQ(j["empty"], true);
  EXPECT_EQ(j["notes"][0], r.notes[0]);
  EXPECT_EQ(csv_read::ParseCsv(ReportCsv(r)).size(), 1u) << "the header alone";
  const std::string html = ReportHtml(r);
  std::vector<markup_check::Element> els;
  std::string err;
  ASSERT_TRUE(markup_check::Parse(html, &els, &err)) << err;
  EXPECT_EQ(html.find("<svg"), std::string::npos) << "no plot without marks";
  EXPECT_NE(html.find("holds no run"), std::string::npos);
}

TEST(ReportFormatsText, InvalidUtf8AndControlCharactersNeverReachTheOutput) {
  Report r;
  r.scope = "operator bad\xC3";
  ConfigRow row;
  row.op = "op\x1b[31m";
  row.config = "c\nd";
  row.kernel = "k\xFF";
  r.configs = {row};
  r.runs.push_back(RunSeries{});
  for (const std::string& out : {ReportMarkdown(r), ReportJson(r), ReportCsv(r), ReportHtml(r)}) {
    EXPECT_TRUE(IsValidUtf8(out));
    EXPECT_EQ(out.find('\x1b'), std::string::npos);
  }
}

}  // namespace
}  // namespace forgek
