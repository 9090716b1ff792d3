// A resumed run's history as the run had it, and the analysis of a candidate's profile that an
// agent is shown: both the same whether a run went on unbroken or was resumed (`--resume RUN`).
#pragma once

#include <string>
#include <vector>

#include "forgek/agent/agent.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// The store's subject of a candidate's profile and observations: "candidate:<hash>".
std::string CandidateSubject(const std::string& hash);

// What the analysis of a candidate's `profiles` observes, rendered for an agent
// (AttemptSummary::bottleneck). Each profile is labelled with the candidate's subject first.
std::string CandidateAnalysis(Store* store, const KnowledgeBase& kb, const OperatorSpec& op, const std::string& arch,
                              const std::string& device, std::vector<KernelProfile> profiles, const std::string& hash);

// Where the history of a resumed run comes from and how its analyses are rendered.
struct ResumeSource {
  Store* store = nullptr;
  const OperatorSpec* op = nullptr;
  std::string arch, device;
  const KnowledgeBase* kb = nullptr;
};

// The attempts of run `run_id`, in order, as the run's own history held them: each with its
// candidate's source, family, params and mechanisms; a timed one with its per-config times, SOL %
// and verdicts; a new best (timed and faster than every earlier attempt on the geomean) whose
// profile the store keeps with the analysis the agent was shown. What cannot be read of one
// attempt (params that no longer parse, a candidate the store lacks) is said in `notes`, and the
// attempt is kept with the rest. False with `err` on a store error.
//
// The per-config verdicts are derived again from the stored times, with the candidate's noise
// (the only one the store keeps) standing for the incumbent's too.
bool LoadResumedHistory(const ResumeSource& from, const std::string& run_id, std::vector<AttemptSummary>* out,
                        std::vector<std::string>* notes, std::string* err);

}  // namespace forgek
