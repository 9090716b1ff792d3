// Headless Chromium as the tests' eye: a harness page frames the page under test and writes what the
// browser laid out as JSON into its own DOM, which --dump-dom prints; console messages come from the
// browser's log on stderr.
#include "report/browser_check.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "forgek/core/subprocess.h"
#include "test_util.h"

namespace forgek::browser_check {
namespace {

constexpr double kBrowserTimeoutS = 90;

// A file URL for an absolute path, every byte outside [A-Za-z0-9/._-] percent-encoded.
std::string FileUrl(const std::string& path) {
  std::string url = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-') {
      url += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      url += hex;
    }
  }
  return url;
}

// The harness: the page in a 1280-wide frame; once it has loaded, every <svg>'s box and marks.
std::string HarnessHtml(const std::string& page_url) {
  return R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"/><title>harness</title></head>
<body style="margin:0"><pre id="result">pending</pre>
<iframe id="page" src=")" +
         page_url + R"(" style="width:1280px;height:4000px;border:0"></iframe>
<script>
const frame = document.getElementById('page');
frame.addEventListener('load', () => {
  const out = {plots: []};
  const d = frame.contentDocument;
  if (!d) {
    out.error = 'the framed page cannot be read (file access)';
  } else {
    out.title = d.title;
    // The content's height, not the frame's: scrollHeight is at least the 4000-pixel frame.
    out.height = Math.ceil(d.documentElement.getBoundingClientRect().height);
    // A table wider than the frame makes the document scroll sideways: its scrollWidth grows.
    out.width = d.documentElement.scrollWidth;
    for (const s of d.querySelectorAll('svg')) {
      const r = s.getBoundingClientRect();
      const p = {id: s.id, width: r.width, height: r.height, marks: 0, drawn: 0, outside: 0};
      for (const m of s.querySelectorAll('.mark')) {
        const b = m.getBoundingClientRect();
        p.marks++;
        if (b.width > 0 && b.height > 0) p.drawn++;
        if (b.left < r.left - 1 || b.top < r.top - 1 || b.right > r.right + 1 || b.bottom > r.bottom + 1) p.outside++;
      }
      out.plots.push(p);
    }
  }
  document.getElementById('result').textContent = JSON.stringify(out);
});
</script></body></html>
)";
}

// The flags every run of the browser takes: headless, no sandbox (CI runs as root), no GPU, a
// profile of its own under `scratch_dir`, the log on stderr (console messages included). Each run
// has a scratch folder of its own: two browsers sharing a profile (tests run in parallel) hand the
// page to the first and exit 0 without a screenshot.
std::vector<std::string> BrowserArgs(const std::string& browser, const std::string& scratch_dir) {
  return {browser,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--hide-scrollbars",
          "--user-data-dir=" + scratch_dir + "/browser-profile",
          "--enable-logging=stderr",
          "--v=0",
          "--virtual-time-budget=10000"};
}

std::string Unescape(std::string s) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  }
  return s;
}

std::string Describe(const ProcessOutput& run) {
  if (!run.started) return "could not be started";
  if (run.timed_out) return "timed out after " + std::to_string(static_cast<int>(kBrowserTimeoutS)) + " s";
  return "exited " + std::to_string(run.exit_code) + ": " + run.err.substr(0, 2000);
}

}  // namespace

std::string Browser() {
  for (const char* name : {"chromium-headless-shell", "chromium"}) {
    std::string path = FindInPath(name);
    if (!path.empty()) return path;
  }
  return "";
}

bool Inspect(const std::string& browser, const std::string& html_path, Page* page, std::string* err) {
  TempDir scratch;
  const std::string harness = scratch.file("harness.html");
  WriteFile(harness, HarnessHtml(FileUrl(html_path)));
  std::vector<std::string> argv = BrowserArgs(browser, scratch.path());
  argv.push_back("--allow-file-access-from-files");  // the harness reads the framed file's DOM
  argv.push_back("--dump-dom");
  argv.push_back(FileUrl(harness));
  const ProcessOutput run = RunProcess(argv, kBrowserTimeoutS);
  if (!run.started || run.timed_out || run.exit_code != 0) {
    *err = browser + " " + Describe(run);
    return false;
  }
  const std::string open = "<pre id=\"result\">";
  const size_t begin = run.out.find(open);
  const size_t end = begin == std::string::npos ? begin : run.out.find("</pre>", begin);
  if (end == std::string::npos) {
    *err = "the harness left no result in the DOM: " + run.out.substr(0, 2000);
    return false;
  }
  const nlohmann::json j =
      nlohmann::json::parse(Unescape(run.out.substr(begin + open.size(), end - begin - open.size())), nullptr, false);
  if (!j.is_object()) {
    *err = "the harness's result is not JSON (the page did not finish loading?): " + run.out.substr(begin, 500);
    return false;
  }
  if (j.contains("error")) {
    *err = j["error"].get<std::string>();
    return false;
  }
  *page = Page{};
  page->title = j.value("title", "");
  page->height = j.value("height", 0);
  page->width = j.value("width", 0);
  for (const nlohmann::json& p : j["plots"]) {
    page->plots.push_back({p.value("id", ""), p.value("width", 0.0), p.value("height", 0.0), p.value("marks", 0),
                           p.value("drawn", 0), p.value("outside", 0)});
  }
  // A console message in the log: `[pid/time:INFO:CONSOLE:12] "message", source: file:///... (12)`.
  std::istringstream lines(run.err);
  for (std::string line; std::getline(lines, line);) {
    const size_t tag = line.find(":CONSOLE");
    if (tag == std::string::npos) continue;
    const size_t text = line.find("] ", tag);
    page->console.push_back(text == std::string::npos ? line : line.substr(text + 2));
  }
  return true;
}

bool Screenshot(const std::string& browser, const std::string& html_path, int height, const std::string& png_path,
                std::string* err) {
  std::remove(png_path.c_str());
  TempDir scratch;
  std::vector<std::string> argv = BrowserArgs(browser, scratch.path());
  argv.push_back("--window-size=1280," + std::to_string(height));
  argv.push_back("--screenshot=" + png_path);
  argv.push_back(FileUrl(html_path));
  const ProcessOutput run = RunProcess(argv, kBrowserTimeoutS);
  if (!run.started || run.timed_out || run.exit_code != 0) {
    *err = browser + " " + Describe(run);
    return false;
  }
  int w = 0, h = 0;
  if (!PngSize(png_path, &w, &h)) {
    *err = browser + " wrote no PNG at " + png_path;
    return false;
  }
  return true;
}

bool PngSize(const std::string& png_path, int* width, int* height) {
  std::ifstream in(png_path, std::ios::binary);
  unsigned char head[24];
  if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return false;
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!std::equal(kSignature, kSignature + 8, head) || std::string(reinterpret_cast<char*>(head + 12), 4) != "IHDR")
    return false;
  auto be32 = [&](int at) {
    return static_cast<int>((static_cast<unsigned>(head[at]) << 24) | (static_cast<unsigned>(head[at + 1]) << 16) |
                            (static_cast<unsigned>(head[at + 2]) << 8) | static_cast<unsigned>(head[at + 3]));
  };
  *width = be32(16);
  *height = be32(20);
  return true;
}

}  // namespace forgek::browser_check
