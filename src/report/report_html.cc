// The HTML printer of a report: one self-contained, well-formed file (XHTML-style syntax, so an XML
// parser reads it too) with inline CSS, the tables and every plot as an inline <svg> with an id.
// No script and no external resource: it reads the same offline, in a mail or a CI artifact.
#include <cctype>

#include "forgek/report/report_print.h"
#include "report_plots.h"
#include "report_tables.h"
#include "report_text.h"
#include "svg_plot.h"

namespace forgek {
namespace {

using report_text::Html;

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1200px;"
    "padding:0 1em;color:#222;line-height:1.4}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}"
    "th,td{border:1px solid #ddd;padding:.25em .4em;vertical-align:top}"
    "th{background:#f4f4f4;text-align:left}"
    "td{overflow-wrap:break-word}td.r{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.note{min-width:18em}"
    "tr:nth-child(even) td{background:#fafafa}.meta,.intro{color:#555}"
    "svg.plot{display:block;margin:1em 0;max-width:100%;height:auto}"
    "svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#333}"
    "svg text.title{font-size:13px;font-weight:600}svg text.label{font-size:12px}"
    "ul.notes li{color:#8a4b00}";

// A cell's text, escaped, with a line-break opportunity after each comma and slash: kernel params
// ("families/row_per_cta.cu ITEMS=4,LOAD_CS=0,...") are long words otherwise, and their column
// would push the table past the page.
std::string CellHtml(const std::string& text) {
  const std::string escaped = Html(text);
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    out += c;
    // A slash only inside a path ("families/row_per_cta.cu"), not one that follows an entity.
    const bool path_slash = c == '/' && i > 0 && (std::isalnum(static_cast<unsigned char>(escaped[i - 1])) ||
                                                  escaped[i - 1] == '_');
    if (c == ',' || path_slash) out += "<wbr/>";
  }
  return out;
}

std::string TableHtml(const report_tables::Table& t) {
  std::string out = "<table id=\"" + Html(t.id) + "-table\"><thead><tr>";
  for (const std::string& h : t.headers) out += "<th>" + Html(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const std::vector<std::string>& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      // A note is prose: a column of its own width, so that a long one does not make its row a
      // column of single words as tall as the page.
      const bool note = i < t.headers.size() && t.headers[i] == "note";
      out += std::string(i < t.align.size() && t.align[i] == 'r' ? "<td class=\"r\">"
                         : note                                  ? "<td class=\"note\">"
                                                                 : "<td>") +
             CellHtml(row[i]) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

// A section: heading, intro, the plots that have marks, then the table.
std::string Section(const report_tables::Table& t, const std::vector<svg::Plot>& plots = {}) {
  std::string out = "<section id=\"" + Html(t.id) + "\">\n<h2>" + Html(t.title) + "</h2>\n";
  if (!t.intro.empty()) out += "<p class=\"intro\">" + Html(t.intro) + "</p>\n";
  for (const svg::Plot& p : plots) {
    const std::string svg = svg::Render(p);
    if (!svg.empty()) out += svg + "\n";
  }
  return out + TableHtml(t) + "</section>\n";
}

}  // namespace

std::string ReportHtml(const Report& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                    "<meta name=\"generator\" content=\"forgek report\"/>\n<title>forgek report: " +
                    Html(r.scope) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>forgek report: " + Html(r.scope) + "</h1>\n<p class=\"meta\">Store <code>" + Html(r.store_path) +
         "</code>, generated " + Html(r.generated_at) + ".</p>\n";
  if (!r.notes.empty()) {
    out += "<ul class=\"notes\">";
    for (const std::string& n : r.notes) out += "<li>" + Html(n) + "</li>";
    out += "</ul>\n";
  }
  if (!r.Empty()) {
    out += Section(report_tables::Scoreboard(r.configs)) + Section(report_tables::Times(r));
    if (report_tables::HasTorch(r)) out += Section(report_tables::Torch(r), report_plots::Torch(r));
    out += Section(report_tables::Operators(r));
    out += Section(report_tables::Runs(r), {report_plots::Convergence(r)});
    out += Section(report_tables::Seals(r), report_plots::Rooflines(r));
    if (!r.devices.empty()) out += Section(report_tables::Devices(r));
    if (!r.nightly.empty()) out += Section(report_tables::Nightly(r), report_plots::Nightly(r));
    if (!r.knowledge.empty()) out += Section(report_tables::Knowledge(r), {report_plots::Knowledge(r)});
  }
  return out + "</body>\n</html>\n";
}

}  // namespace forgek
