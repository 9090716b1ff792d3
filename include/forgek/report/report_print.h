// The printers of a Report, one per format, each reading the same data (report.h).
#pragma once

#include <string>

#include "forgek/report/report.h"

namespace forgek {

enum class ReportFormat { markdown, json, csv, html };
// "md" (or "markdown"), "json", "csv", "html"; false for anything else.
bool ParseReportFormat(const std::string& text, ReportFormat* out);

// Markdown: the scoreboard, operators, runs, seals, nightly history and knowledge as tables.
std::string ReportMarkdown(const Report& r);
// JSON ({"format": "forgek-report/1", ...}): every field of the report, unknown numbers null; per
// config a "torch" object (null without a comparison against PyTorch).
std::string ReportJson(const Report& r);
// CSV (RFC 4180): one row per operator and config, with a header row, the torch_* columns empty
// without a comparison against PyTorch; the series are in JSON and HTML.
std::string ReportCsv(const Report& r);
// One self-contained HTML file: inline CSS, the tables, and every plot as an inline <svg> with an
// id (no script, no external resource).
std::string ReportHtml(const Report& r);

std::string PrintReport(const Report& r, ReportFormat format);

}  // namespace forgek
