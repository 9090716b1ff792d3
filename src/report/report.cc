// BuildReport: the selection read once, then each part of the report gathered by its own step.
#include "forgek/report/report.h"

#include "report_build.h"

namespace forgek {

bool BuildReport(Store& store, const ReportSelection& sel, const std::map<std::string, OperatorSpec>& operators,
                 Report* out, std::string* err) {
  if (!sel.run_id.empty() && !sel.op.empty()) {
    *err = "a report is of one run or of one operator, not both";
    return false;
  }
  Report r;
  r.store_path = store.path();
  r.generated_at = NowIso8601();
  report_build::Scope scope;
  if (!report_build::LoadScope(store, sel, &scope, &r.scope, err)) return false;
  r.runs = report_build::RunSeriesOf(scope);
  if (!report_build::ConfigRowsOf(store, scope, operators, &r.configs, &r.operators, &r.notes, err)) return false;
  if (!report_build::SealsOf(store, scope, operators, &r.seals, &r.devices, &r.notes, err)) return false;
  r.nightly = report_build::NightlyOf(scope);
  if (!report_build::KnowledgeOf(store, scope, &r.knowledge, err)) return false;
  if (r.Empty())
    r.notes.insert(r.notes.begin(), sel.op.empty() ? "the store holds no run, seal or nightly check yet"
                                                   : "the store holds no run, seal or nightly check of " + sel.op);
  *out = std::move(r);
  return true;
}

}  // namespace forgek
