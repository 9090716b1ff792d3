// The markdown printer of a report: the scoreboard first (the view `batch --all` writes), then the
// times per config and beside them the comparisons against PyTorch (`--torch`), operators, runs,
// seals, device bounds, nightly history and knowledge as tables.
#include "forgek/report/report_print.h"
#include "report_tables.h"
#include "report_text.h"

namespace forgek {
namespace {

std::string Section(const report_tables::Table& t) {
  std::string out = "## " + t.title + "\n\n";
  // Escaped: an intro may quote a user's file (the file names and devices of `--torch`).
  if (!t.intro.empty()) out += report_text::MarkdownCell(t.intro) + "\n\n";
  return out + report_tables::Markdown(t) + "\n";
}

}  // namespace

std::string ReportMarkdown(const Report& r) {
  using report_text::MarkdownCell;
  std::string out = "# forgek report: " + MarkdownCell(r.scope) + "\n\nStore `" + MarkdownCell(r.store_path) +
                    "`, generated " + r.generated_at + ".\n\n";
  for (const std::string& n : r.notes) out += "- " + MarkdownCell(n) + "\n";
  if (!r.notes.empty()) out += "\n";
  if (r.Empty()) return out;
  out += Section(report_tables::Scoreboard(r.configs)) + Section(report_tables::Times(r));
  // Beside the worker's times per config, what PyTorch takes for them.
  if (report_tables::HasTorch(r)) out += Section(report_tables::Torch(r));
  out += Section(report_tables::Operators(r)) + Section(report_tables::Runs(r)) + Section(report_tables::Seals(r));
  if (!r.devices.empty()) out += Section(report_tables::Devices(r));
  if (!r.nightly.empty()) out += Section(report_tables::Nightly(r));
  if (!r.knowledge.empty()) out += Section(report_tables::Knowledge(r));
  return out;
}

}  // namespace forgek
