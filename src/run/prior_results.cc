// Prior results: the best candidates of earlier runs of an operator, for the agent to start from.
#include "prior_results.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "forgek/knowledge/knowledge.h"
#include "forgek/core/params.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

std::vector<PriorResult> RankPriorResults(const OperatorSpec& op, const std::vector<std::string>& run_configs,
                                          const std::vector<TimedAttempt>& past, const std::string& exclude_run,
                                          size_t limit) {
  std::set<std::string> regimes;
  if (run_configs.empty()) {
    for (const ConfigSpec& c : op.configs) regimes.insert(ShapeRegime(op, c.name));
  } else {
    for (const std::string& c : run_configs) regimes.insert(ShapeRegime(op, c));
  }

  std::map<std::string, PriorResult> best;  // by family + params: one entry per distinct instance
  for (const TimedAttempt& a : past) {
    if (a.run_id == exclude_run) continue;
    std::vector<double> sol_pcts;
    std::string configs;
    for (const AttemptMeasurement& m : a.measurements) {
      // Configs the operator no longer has are ShapeRegime's "any": they match nothing specific.
      if (!m.correct || m.sol_pct <= 0 || !op.FindConfig(m.config) || !regimes.count(ShapeRegime(op, m.config)))
        continue;
      sol_pcts.push_back(m.sol_pct);
      configs += (configs.empty() ? "" : ",") + m.config;
    }
    if (sol_pcts.empty()) continue;
    PriorResult r;
    r.family = a.family;
    r.candidate_hash = a.candidate_hash;
    r.geomean_speedup = a.geomean_speedup;
    std::string perr;
    if (!ParseParamsJson(a.params_json, &r.params, &perr)) continue;
    r.sol_pct = Geomean(sol_pcts);
    char text[96];
    std::snprintf(text, sizeof text, ": %.1f%% SOL, %.3fx its incumbent", r.sol_pct, a.geomean_speedup);
    r.source = "attempt " + std::to_string(a.iteration + 1) + " of run " + a.run_id.substr(0, 8) + " on " + configs +
               text;
    // A free-form candidate is its own source: one entry per candidate.
    std::string key = a.family.empty() ? "hash " + a.candidate_hash : a.family + " " + a.params_json;
    auto it = best.find(key);
    if (it == best.end() || it->second.sol_pct < r.sol_pct) best[key] = std::move(r);
  }

  std::vector<PriorResult> out;
  for (auto& [key, r] : best) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(),
                   [](const PriorResult& x, const PriorResult& y) { return x.sol_pct > y.sol_pct; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

bool LoadPriorResults(Store& store, const OperatorSpec& op, const std::string& arch,
                      const std::vector<std::string>& run_configs, const std::string& exclude_run, size_t limit,
                      std::vector<PriorResult>* out, std::string* err) {
  // The best few hundred by speedup are plenty to find the best few by SOL within a regime.
  std::vector<TimedAttempt> past;
  if (!store.ListTimedAttempts(op.name, arch, 400, &past, err)) return false;
  *out = RankPriorResults(op, run_configs, past, exclude_run, limit);
  // The sources, for agents that rewrite code rather than instantiate families.
  for (PriorResult& r : *out) {
    CandidateRecord cand;
    bool found = false;
    if (r.candidate_hash.empty()) continue;
    if (!store.GetCandidate(r.candidate_hash, &cand, &found, err)) return false;
    if (found) r.kernel_source = cand.source;
  }
  return true;
}

}  // namespace forgek
