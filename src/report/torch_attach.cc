// Setting what scripts/compare_torch.py timed beside the report's config rows (`report --torch`).
#include <map>
#include <utility>

#include "forgek/report/report.h"
#include "report_text.h"

namespace forgek {
namespace {

// One seal: the same id, or an id cut to at least what `seal list` shows (12 characters) and the
// start of the other.
bool SameSeal(const std::string& a, const std::string& b) {
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  return !shorter.empty() && shorter.size() >= 12 && longer.compare(0, shorter.size(), shorter) == 0;
}

// The seal the report shows for the operator of `row`: its operator row's, else the row's own.
std::string ReportSeal(const Report& r, const ConfigRow& row) {
  for (const OperatorRow& o : r.operators)
    if (o.op == row.op && o.arch == row.arch && !o.seal.empty()) return o.seal;
  return row.seal;
}

std::string SealNote(const std::string& compared, const std::string& shown, const std::string& op) {
  if (compared.empty() || SameSeal(compared, shown)) return "";
  const std::string id = report_text::ShortId(compared);
  return shown.empty() ? "compared seal " + id + "; this report shows no seal of " + op
                       : "compared seal " + id + ", not the newest (" + report_text::ShortId(shown) + ")";
}

// Adds one comparison to `r`: its numbers beside the rows they match, the rest in the notes.
void Attach(const TorchComparison& t, Report* r) {
  const std::string from = "PyTorch comparison " + t.source.file + ": ";
  std::vector<std::string> unmatched;
  for (const TorchOperator& op : t.operators) {
    bool op_shown = false;
    for (const ConfigRow& row : r->configs) op_shown = op_shown || row.op == op.op;
    if (!op_shown) {
      unmatched.push_back(op.op);
      continue;
    }
    if (!op.note.empty()) r->notes.push_back(from + op.op + ": " + op.note);
    for (const TorchConfig& c : op.configs) {
      bool matched = false;
      for (ConfigRow& row : r->configs) {
        if (row.op != op.op || row.config != c.config) continue;
        row.torch = TorchBeside{t.source.file, op.seal, c, SealNote(op.seal, ReportSeal(*r, row), op.op)};
        matched = true;
      }
      if (!matched) unmatched.push_back(op.op + " " + c.config);
    }
  }
  if (!unmatched.empty()) r->notes.push_back(from + "not in this report: " + report_text::Join(unmatched));
  r->torch.push_back(t.source);
}

}  // namespace

bool AttachTorchComparisons(const std::vector<TorchComparison>& comparisons, Report* report, std::string* err) {
  std::map<std::pair<std::string, std::string>, std::string> seen;  // (operator, config) -> its file
  for (const ConfigRow& row : report->configs)  // attached before (a run's yardstick gives way to a file)
    if (row.torch && !row.torch->from_run) seen.emplace(std::make_pair(row.op, row.config), row.torch->file);
  for (const TorchComparison& t : comparisons)
    for (const TorchOperator& op : t.operators)
      for (const TorchConfig& c : op.configs) {
        auto [it, fresh] = seen.emplace(std::make_pair(op.op, c.config), t.source.file);
        if (!fresh) {
          *err = op.op + " " + c.config + " is timed in " + it->second + " and in " + t.source.file +
                 ": give one comparison of each config";
          return false;
        }
      }
  Report r = *report;
  for (const TorchComparison& t : comparisons) Attach(t, &r);
  *report = std::move(r);
  return true;
}

}  // namespace forgek
