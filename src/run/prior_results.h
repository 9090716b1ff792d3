// Prior results: the best candidates of earlier runs of an operator, for the agent to start from.
#pragma once

#include <string>
#include <vector>

#include "forgek/agent/agent.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// Ranks earlier attempts by what they achieved on configs of the shape regimes this run serves
// (`run_configs`, empty = every config of `op`): the geomean of their speed-of-light % there,
// an absolute measure that stays comparable across runs whose incumbents differ. Attempts of
// `exclude_run` (a resumed run has them in its history already), attempts with no correct, timed
// measurement in a matching regime, and repeats of one (family, params) or of one free-form
// candidate are left out; at most `limit` results, best first.
std::vector<PriorResult> RankPriorResults(const OperatorSpec& op, const std::vector<std::string>& run_configs,
                                          const std::vector<TimedAttempt>& past, const std::string& exclude_run,
                                          size_t limit);

// The store's timed attempts of `op` on `arch`, ranked as above, each with its candidate's source.
bool LoadPriorResults(Store& store, const OperatorSpec& op, const std::string& arch,
                      const std::vector<std::string>& run_configs, const std::string& exclude_run, size_t limit,
                      std::vector<PriorResult>* out, std::string* err);

}  // namespace forgek
