// The CSV printer of a report (RFC 4180): one row per operator and config, the operator's attempts
// and spend repeated on each of its rows and what PyTorch takes for it last (`--torch`), so that one
// table loads into a spreadsheet or a data frame. The series (convergence, nightly history,
// knowledge) are in JSON and HTML.
#include <cmath>
#include <cstdio>

#include "forgek/report/report_print.h"
#include "report_text.h"

namespace forgek {
namespace {

// Full precision and no unit; empty for unknown.
std::string Cell(double v) {
  if (!(v > 0) || !std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// What `report --torch` read of the config, as the last columns; empty cells without it.
std::string TorchCells(const std::optional<TorchBeside>& t) {
  if (!t) return ",,,,,,,";
  const TorchConfig& n = t->numbers;
  std::string note = t->note;
  if (!n.note.empty()) note += (note.empty() ? "" : "; ") + n.note;
  return report_text::CsvField(t->seal) + "," + Cell(n.seal_us) + "," + Cell(n.eager_us) + "," + Cell(n.compile_us) +
         "," + Cell(n.speedup_vs_eager) + "," + Cell(n.speedup_vs_compile) + "," +
         (n.correct ? (*n.correct ? "true" : "false") : "") + "," + report_text::CsvField(note);
}

}  // namespace

std::string ReportCsv(const Report& r) {
  using report_text::CsvField;
  std::string out =
      "operator,arch,config,expert_us,expert_noise,incumbent_us,incumbent_noise,best_us,best_noise,"
      "speedup_vs_expert,sol_pct,floor_us,kernel,mechanisms,seal,attempts,operator_runs,operator_attempts,"
      "operator_cost_usd,note,torch_seal,torch_seal_us,torch_eager_us,torch_compile_us,torch_speedup_vs_eager,"
      "torch_speedup_vs_compile,torch_correct,torch_note\r\n";
  for (const ConfigRow& c : r.configs) {
    const OperatorRow* op = nullptr;
    for (const OperatorRow& o : r.operators)
      if (o.op == c.op && o.arch == c.arch) op = &o;
    std::string line = CsvField(c.op) + "," + CsvField(c.arch) + "," + CsvField(c.config) + "," + Cell(c.expert_us) +
                       "," + Cell(c.expert_noise) + "," + Cell(c.sealed_us) + "," + Cell(c.sealed_noise) + "," +
                       Cell(c.best_us) + "," + Cell(c.best_noise) + "," + Cell(c.speedup) + "," + Cell(c.sol_pct) +
                       "," + Cell(c.floor_us) + "," + CsvField(c.kernel) + "," +
                       CsvField(report_text::Join(c.mechanisms, ";")) + "," + CsvField(c.seal) + "," +
                       std::to_string(c.attempts) + "," + (op ? std::to_string(op->runs) : "") + "," +
                       (op ? std::to_string(op->attempts) : "") + "," + (op ? Cell(op->cost_usd) : "") + "," +
                       CsvField(c.note) + "," + TorchCells(c.torch);
    out += line + "\r\n";
  }
  return out;
}

}  // namespace forgek
