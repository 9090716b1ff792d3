// A resumed run's history: attempts, their candidates, measurements and the analyses of new bests.
#include "resume_history.h"

#include <algorithm>
#include <map>

#include "forgek/core/params.h"
#include "forgek/verdict/verdict.h"

namespace forgek {
namespace {

// The newest stored profile of `hash` on each config of `op`, in the operator's config order (the
// order a profile of every config comes back from the evaluator).
bool StoredProfiles(const ResumeSource& from, const std::string& hash, std::vector<KernelProfile>* out,
                    std::string* err) {
  out->clear();
  std::vector<ProfileRecord> records;  // newest first
  if (!from.store->ListProfiles(from.op->name, from.arch, CandidateSubject(hash), &records, err)) return false;
  std::map<std::string, const KernelProfile*> newest;
  for (const ProfileRecord& r : records) newest.emplace(r.profile.config, &r.profile);
  for (const ConfigSpec& c : from.op->configs) {
    auto it = newest.find(c.name);
    if (it != newest.end()) out->push_back(*it->second);
  }
  return true;
}

// Per-config times of a timed attempt as the run's history shows them (run_state.cc, Commit): in
// the operator's config order, as the evaluator returned them (the store keeps them by name).
std::vector<ConfigTime> Times(const OperatorSpec& op, std::vector<AttemptMeasurement> measurements) {
  auto rank = [&](const AttemptMeasurement& m) {
    size_t i = 0;
    while (i < op.configs.size() && op.configs[i].name != m.config) ++i;
    return i;
  };
  std::stable_sort(measurements.begin(), measurements.end(),
                   [&](const AttemptMeasurement& x, const AttemptMeasurement& y) { return rank(x) < rank(y); });
  std::vector<ConfigTime> times;
  for (const AttemptMeasurement& m : measurements) {
    ConfigResult c;
    c.config = m.config;
    c.candidate.median_us = m.candidate_us;
    c.incumbent.median_us = m.incumbent_us;
    c.candidate.rel_noise = c.incumbent.rel_noise = m.rel_noise;
    times.push_back({m.config, m.candidate_us, m.incumbent_us, m.sol_pct, DirectionName(CompareConfig(c).direction)});
  }
  return times;
}

}  // namespace

std::string CandidateSubject(const std::string& hash) { return "candidate:" + hash; }

std::string CandidateAnalysis(Store* store, const KnowledgeBase& kb, const OperatorSpec& op, const std::string& arch,
                              const std::string& device, std::vector<KernelProfile> profiles, const std::string& hash) {
  std::vector<Observation> all;
  for (KernelProfile& prof : profiles) {
    prof.label = CandidateSubject(hash);
    std::vector<Observation> obs = AnalyzeProfile(store, kb, op, arch, device, prof);
    all.insert(all.end(), obs.begin(), obs.end());
  }
  return RenderObservations(all);
}

bool LoadResumedHistory(const ResumeSource& from, const std::string& run_id, std::vector<AttemptSummary>* out,
                        std::vector<std::string>* notes, std::string* err) {
  out->clear();
  std::vector<AttemptRecord> attempts;
  if (!from.store->ListAttempts(run_id, &attempts, err)) return false;
  double best = 0;
  for (const AttemptRecord& rec : attempts) {
    AttemptSummary a;
    a.iteration = rec.iteration;
    a.candidate_hash = rec.candidate_hash;
    a.outcome = rec.outcome;
    a.feedback = rec.detail;
    a.geomean_speedup = rec.geomean_speedup;
    CandidateRecord cand;
    bool have = false;
    if (!from.store->GetCandidate(rec.candidate_hash, &cand, &have, err)) return false;
    if (have) {
      a.family = cand.family;
      a.source = cand.source;
      a.mechanisms = cand.mechanisms;
      std::string perr;
      if (!ParseParamsJson(cand.params_json, &a.params, &perr)) notes->push_back("attempt " + rec.id + ": " + perr);
    } else {
      notes->push_back("attempt " + rec.id + ": candidate " + rec.candidate_hash + " is not in the store");
    }
    const bool timed = OutcomeTimed(rec.outcome);
    if (timed) a.configs = Times(*from.op, rec.measurements);
    // A new best was profiled for the agent when the run began it (RunState::Commit); its profile
    // is in the store and its analysis is rendered again the same way.
    if (timed && rec.geomean_speedup > best) {
      best = rec.geomean_speedup;
      std::vector<KernelProfile> profiles;
      if (!StoredProfiles(from, rec.candidate_hash, &profiles, err)) return false;
      if (!profiles.empty() && from.kb)
        a.bottleneck = CandidateAnalysis(from.store, *from.kb, *from.op, from.arch, from.device, std::move(profiles),
                                         rec.candidate_hash);
    }
    out->push_back(std::move(a));
  }
  return true;
}

}  // namespace forgek
