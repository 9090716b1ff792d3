// Which records a report reads: the run, the operator or the whole store, read once for every step.
#include <algorithm>

#include "report_build.h"

namespace forgek {

bool FindReportRun(Store& store, const std::string& id_or_prefix, RunRecord* out, bool* found, std::string* err) {
  *found = false;
  if (!store.GetRun(id_or_prefix, out, found, err)) return false;
  if (*found || id_or_prefix.size() < 4) return true;
  // A prefix, as `seal` takes one: run ids are long, and `knowledge` and the logs show them cut.
  std::vector<RunRecord> all;
  if (!store.ListRuns("", "", &all, err)) return false;
  std::vector<RunRecord> matches;
  for (const RunRecord& r : all)
    if (r.id.compare(0, id_or_prefix.size(), id_or_prefix) == 0) matches.push_back(r);
  if (matches.size() > 1) {
    *err = "run id prefix " + id_or_prefix + " is ambiguous: it starts " + std::to_string(matches.size()) +
           " runs (" + matches[0].id + ", " + matches[1].id + (matches.size() > 2 ? ", ..." : "") + ")";
    return false;
  }
  if (matches.size() == 1) {
    *out = matches[0];
    *found = true;
  }
  return true;
}

namespace report_build {
namespace {

bool LoadRun(Store& store, const RunRecord& run, RunData* out, std::string* err) {
  out->run = run;
  if (!store.ListAttempts(run.id, &out->attempts, err)) return false;
  std::vector<ExchangeRecord> exchanges;
  if (!store.ListExchanges(run.id, &exchanges, err)) return false;
  for (const ExchangeRecord& e : exchanges) {
    out->cost_usd += e.cost_usd;
    out->tokens += e.prompt_tokens + e.completion_tokens;
  }
  return true;
}

void AddOperator(Scope* scope, const std::string& op, const std::string& arch) {
  const std::pair<std::string, std::string> key{op, arch};
  if (std::find(scope->operators.begin(), scope->operators.end(), key) == scope->operators.end())
    scope->operators.push_back(key);
}

}  // namespace

bool LoadScope(Store& store, const ReportSelection& sel, Scope* scope, std::string* label, std::string* err) {
  std::vector<RunRecord> runs;
  if (!sel.run_id.empty()) {
    RunRecord run;
    bool found = false;
    if (!FindReportRun(store, sel.run_id, &run, &found, err)) return false;
    if (!found) {
      *err = "no run " + sel.run_id + " in " + store.path();
      return false;
    }
    runs.push_back(run);
    *label = "run " + run.id + " (" + run.operator_name + " on " + run.arch + ")";
    // The seals this run made, and their nightly checks.
    std::vector<SealRecord> seals;
    if (!store.ListSeals(run.operator_name, run.arch, &seals, err)) return false;
    for (const SealRecord& s : seals)
      if (s.run_id == run.id) scope->seals.push_back(s);
    for (const SealRecord& s : scope->seals) {
      std::vector<SealCheckRecord> rows;
      if (!store.ListSealChecks(s.id, "", &rows, err)) return false;
      scope->checks.insert(scope->checks.end(), rows.begin(), rows.end());
    }
    std::stable_sort(scope->checks.begin(), scope->checks.end(),
                     [](const SealCheckRecord& a, const SealCheckRecord& b) { return a.checked_at < b.checked_at; });
  } else {
    if (!store.ListRuns(sel.op, "", &runs, err)) return false;
    if (!store.ListSeals(sel.op, "", &scope->seals, err)) return false;
    if (!store.ListSealChecks("", sel.op, &scope->checks, err)) return false;
    *label = sel.op.empty() ? "the whole store" : "operator " + sel.op;
  }
  // ListRuns gives the newest first; the series read oldest first.
  std::reverse(runs.begin(), runs.end());
  for (const RunRecord& r : runs) {
    RunData d;
    if (!LoadRun(store, r, &d, err)) return false;
    scope->runs.push_back(std::move(d));
    AddOperator(scope, r.operator_name, r.arch);
  }
  for (const SealRecord& s : scope->seals) AddOperator(scope, s.operator_name, s.arch);
  return true;
}

}  // namespace report_build
}  // namespace forgek
