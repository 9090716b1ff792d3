// The report's format names and the one switch from a format to its printer.
#include "forgek/report/report_print.h"

namespace forgek {

bool ParseReportFormat(const std::string& text, ReportFormat* out) {
  if (text == "md" || text == "markdown") return *out = ReportFormat::markdown, true;
  if (text == "json") return *out = ReportFormat::json, true;
  if (text == "csv") return *out = ReportFormat::csv, true;
  if (text == "html") return *out = ReportFormat::html, true;
  return false;
}

std::string PrintReport(const Report& r, ReportFormat format) {
  switch (format) {
    case ReportFormat::markdown: return ReportMarkdown(r);
    case ReportFormat::json: return ReportJson(r);
    case ReportFormat::csv: return ReportCsv(r);
    case ReportFormat::html: return ReportHtml(r);
  }
  return ReportMarkdown(r);
}

}  // namespace forgek
