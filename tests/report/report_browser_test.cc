// The HTML report as a person sees it: opened in headless Chromium (Debian's chromium-headless-shell,
// which scripts/install-deps.sh installs), it prints nothing to the console, every plot the file
// holds is laid out with a box and drawn marks that stay inside it, and a screenshot of the whole
// page is kept under the build folder (report-browser/ beside the test binary) to be looked at.
// A planted page shows that each of these checks can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "forgek/core/paths.h"
#include "forgek/report/report.h"
#include "forgek/report/report_print.h"
#include "report/browser_check.h"
#include "report/markup_check.h"
#include "report/report_fixture.h"
#include "report/torch_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace bc = browser_check;

// Where the pages and their screenshots stay after the test: report-browser/ beside the binary.
std::string KeptDir() {
  const std::string self = SelfExecutablePath();
  const std::string dir = self.substr(0, self.rfind('/')) + "/report-browser";
  std::filesystem::create_directories(dir);
  return dir;
}

// CI installs the browser (scripts/install-deps.sh): there a missing one fails; elsewhere it skips.
#define FORGEK_BROWSER_OR_SKIP(browser)                                                                     \
  const std::string browser = bc::Browser();                                                                \
  if (browser.empty()) {                                                                                    \
    if (std::getenv("CI")) FAIL() << "no chromium-headless-shell in PATH: scripts/install-deps.sh installs it"; \
    GTEST_SKIP() << "no chromium-headless-shell or chromium in PATH (scripts/install-deps.sh installs it)";  \
  }

// The ids of the <svg> elements the file holds, in document order.
std::vector<std::string> SvgIds(const std::string& html) {
  std::vector<markup_check::Element> els;
  std::string err;
  EXPECT_TRUE(markup_check::Parse(html, &els, &err)) << err;
  std::vector<std::string> ids;
  for (const markup_check::Element& e : els)
    if (e.name == "svg") ids.push_back(e.attrs.count("id") ? e.attrs.at("id") : "");
  return ids;
}

// Renders `name` (already written under KeptDir()), checks it as a person would look at it, keeps
// its screenshot as NAME.png, and returns the ids of the plots the browser drew.
std::vector<std::string> ExpectSeenWhole(const std::string& browser, const std::string& name) {
  const std::string dir = KeptDir();
  const std::string html_path = dir + "/" + name + ".html";
  const std::vector<std::string> written = SvgIds(ReadFile(html_path));
  bc::Page page;
  std::string err;
  EXPECT_TRUE(bc::Inspect(browser, html_path, &page, &err)) << err;
  for (const std::string& m : page.console) ADD_FAILURE() << name << ": console: " << m;
  EXPECT_NE(page.title.find("forgek report"), std::string::npos) << page.title;
  std::vector<std::string> seen;
  for (const bc::PlotBox& p : page.plots) {
    seen.push_back(p.id);
    EXPECT_GT(p.width, 100) << p.id;
    EXPECT_GT(p.height, 100) << p.id;
    EXPECT_GT(p.drawn_marks, 0) << p.id << ": no mark drawn (" << p.marks << " marks of zero size)";
    EXPECT_EQ(p.marks_outside, 0) << p.id << ": marks outside the plot's frame";
  }
  EXPECT_EQ(seen, written) << name << ": the browser laid out other plots than the file holds";
  EXPECT_GT(page.height, 600) << name;
  EXPECT_LE(page.width, 1280) << name << ": the content is wider than the 1280-pixel window (a table overflows)";

  // The screenshot, and one of an empty page of the same size: the report's holds far more.
  // Each page its own blank: tests run side by side in one folder.
  const std::string png = dir + "/" + name + ".png", blank_page = dir + "/" + name + "-blank";
  const std::string blank_png = blank_page + ".png";
  WriteFile(blank_page + ".html", "<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>");
  EXPECT_TRUE(bc::Screenshot(browser, html_path, page.height, png, &err)) << err;
  EXPECT_TRUE(bc::Screenshot(browser, blank_page + ".html", page.height, blank_png, &err)) << err;
  int w = 0, h = 0;
  EXPECT_TRUE(bc::PngSize(png, &w, &h)) << png;
  EXPECT_EQ(w, 1280);
  EXPECT_EQ(h, page.height);
  const auto size = std::filesystem::file_size(png), blank = std::filesystem::file_size(blank_png);
  EXPECT_GT(size, 5 * blank) << png << " is hardly more than an empty page (" << size << " vs " << blank << " bytes)";
  return seen;
}

TEST(ReportBrowser, TheWholeReportRendersEveryPlotWithNoConsoleMessage) {
  FORGEK_BROWSER_OR_SKIP(browser);
  TempDir tmp;
  std::string err;
  report_fixture::Ids ids;
  ASSERT_TRUE(report_fixture::MakeStore(tmp.file("store.db"), &ids, &err)) << err;
  Store store;
  ASSERT_TRUE(store.Open(tmp.file("store.db"), &err, StoreMode::read_only)) << err;
  Report report;
  ASSERT_TRUE(BuildReport(store, {}, report_fixture::Specs(), &report, &err)) << err;
  WriteFile(KeptDir() + "/report.html", ReportHtml(report));
  const std::vector<std::string> seen = ExpectSeenWhole(browser, "report");
  for (const char* kind : {"plot-convergence", "plot-roofline-", "plot-nightly-", "plot-knowledge"})
    EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [&](const std::string& id) { return id.rfind(kind, 0) == 0; }))
        << "no " << kind << " plot";
}

// Written by the CLI with --torch, as a user gets it: the comparison's bar plot is there too.
TEST(ReportBrowser, TheCliReportWithPyTorchBesideItRendersItsBarPlot) {
  FORGEK_BROWSER_OR_SKIP(browser);
  TempDir tmp;
  std::string err;
  ASSERT_TRUE(torch_fixture::MakeStore(tmp.file("store.db"), &err)) << err;
  const CommandResult r =
      RunForgek({"--store", tmp.file("store.db"), "--operators", SourceDir() + "/operators", "report", "--torch",
                 torch_fixture::ResultsPath(), "--format", "html", "-o", KeptDir() + "/report-torch.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> seen = ExpectSeenWhole(browser, "report-torch");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "plot-torch-0"), seen.end());
}

// Each check can fail: a console error (an attribute the SVG parser rejects), a plot with no drawn
// mark, a mark outside its frame, a table wider than the window and a page the harness cannot
// measure are all reported.
TEST(ReportBrowser, APlantedConsoleErrorEmptyPlotAndStrayMarkAreSeen) {
  FORGEK_BROWSER_OR_SKIP(browser);
  TempDir tmp;
  WriteFile(tmp.file("planted.html"),
            "<!DOCTYPE html><html><head><title>planted</title></head><body>"
            "<svg id=\"bad\" width=\"300\" height=\"200\"><rect class=\"mark\" x=\"10\" y=\"10\" width=\"-5\" "
            "height=\"20\"/></svg>"
            "<svg id=\"stray\" width=\"300\" height=\"200\"><rect class=\"mark\" x=\"250\" y=\"10\" width=\"200\" "
            "height=\"20\" style=\"overflow:visible\"/></svg>"
            "<svg id=\"good\" width=\"300\" height=\"200\"><circle class=\"mark\" cx=\"50\" cy=\"50\" r=\"4\"/></svg>"
            "<table><tr><td>" + std::string(400, 'x') + "</td></tr></table>"
            "</body></html>");
  bc::Page page;
  std::string err;
  ASSERT_TRUE(bc::Inspect(browser, tmp.file("planted.html"), &page, &err)) << err;
  EXPECT_EQ(page.title, "planted");
  ASSERT_EQ(page.console.size(), 1u);
  EXPECT_NE(page.console[0].find("A negative value is not valid"), std::string::npos) << page.console[0];
  ASSERT_EQ(page.plots.size(), 3u);
  EXPECT_EQ(page.plots[0].id, "bad");
  EXPECT_EQ(page.plots[0].marks, 1);
  EXPECT_EQ(page.plots[0].drawn_marks, 0);
  EXPECT_EQ(page.plots[1].marks_outside, 1);
  EXPECT_EQ(page.plots[2].drawn_marks, 1);
  EXPECT_EQ(page.plots[2].marks_outside, 0);
  EXPECT_GT(page.height, 150) << "the page's content: one row of 200-pixel plots";
  EXPECT_LT(page.height, 450) << "the content's height, not the frame's";
  EXPECT_GT(page.width, 1280) << "a cell of 400 unbroken characters overflows the window";
  EXPECT_FALSE(bc::Inspect(browser, tmp.file("no-such-page.html"), &page, &err));
}

}  // namespace
}  // namespace forgek
