// The knowledge over time: after each selected run, the decisions its comparisons bear on and those
// known so far, by verdict. A comparison's evidence names its run ("... in run <id> on ..."); the
// verdicts are today's, since the store keeps no history of them.
#include <set>

#include "forgek/core/decision.h"
#include "report_build.h"

namespace forgek::report_build {
namespace {

// The run a piece of evidence names, "" for none (observations of expert kernels name no run).
std::string RunOf(const std::string& source) {
  const std::string marker = " in run ";
  size_t at = source.find(marker);
  if (at == std::string::npos) return "";
  at += marker.size();
  return source.substr(at, source.find(' ', at) - at);
}

std::map<std::string, int> Zero() {
  std::map<std::string, int> m;
  for (DecisionVerdict v : {DecisionVerdict::hypothesis, DecisionVerdict::validated, DecisionVerdict::refuted})
    m[DecisionVerdictName(v)] = 0;
  return m;
}

}  // namespace

bool KnowledgeOf(Store& store, const Scope& scope, std::vector<KnowledgeStep>* steps, std::string* err) {
  if (scope.runs.empty()) return true;
  std::set<std::string> runs;
  for (const RunData& d : scope.runs) runs.insert(d.run.id);
  std::vector<DecisionRecord> decisions;
  if (!store.ListDecisions(DecisionQuery{}, &decisions, err)) return false;
  std::map<std::string, std::set<std::string>> by_run;  // run id -> decision ids
  std::map<std::string, std::string> verdict;           // decision id -> verdict name
  for (const DecisionRecord& d : decisions) {
    DecisionRecord full;
    std::vector<EvidenceRecord> evidence;
    bool found = false;
    if (!store.GetDecision(d.id, &full, &evidence, &found, err)) return false;
    if (!found) continue;
    verdict[d.id] = DecisionVerdictName(d.verdict);
    for (const EvidenceRecord& e : evidence) {
      const std::string run = RunOf(e.source);
      if (runs.count(run)) by_run[run].insert(d.id);
    }
  }
  std::set<std::string> known;
  for (const RunData& d : scope.runs) {
    KnowledgeStep step;
    step.run_id = d.run.id;
    step.op = d.run.operator_name;
    step.created_at = d.run.created_at;
    step.touched = Zero();
    auto touched = by_run.find(d.run.id);
    if (touched != by_run.end())
      for (const std::string& id : touched->second) {
        ++step.touched[verdict[id]];
        known.insert(id);
      }
    step.known = Zero();
    for (const std::string& id : known) ++step.known[verdict[id]];
    steps->push_back(std::move(step));
  }
  return true;
}

}  // namespace forgek::report_build
