// What a run learns: controlled comparisons of attempts, the best's profile and its ablations.
#include "run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>

#include "forgek/knowledge/store.h"
#include "ablation.h"
#include "resume_history.h"
#include "run_text.h"

namespace forgek {

void RunState::Learn(const Proposal& p, const std::string& hash, const std::string& attempt_id,
                     const EvalResult& result) {
  // A speedup over the incumbent says nothing about any one mechanism: only pairs of attempts that
  // differ in the params of one control group do.
  if (!services_.store || !OutcomeTimed(result.outcome) || p.family.empty() || p.candidate.manifest.controls.empty()) return;
  TimedInstance now{attempt_id, hash, p.params, result.configs};
  std::vector<TimedInstance>& earlier = timed_[p.family];
  for (const TimedInstance& e : earlier)
    for (const SettingComparison& c : CompareSearchPair(op_, p.candidate.manifest, now, e)) RecordLearned(c);
  earlier.push_back(std::move(now));
}

void RunState::RecordLearned(const SettingComparison& c) {
  std::vector<DecisionRecord> updated;
  std::string err;
  ComparisonOrigin origin{&op_, opts_.arch, device_, run_id_};
  if (!RecordComparison(*services_.store, origin, c, &updated, &err)) {
    Degrade("evidence", c.mechanism + " " + c.setting + " vs " + c.against + ": comparison not recorded: " + err);
    return;
  }
  for (const DecisionRecord& d : updated) learned_[d.id] = d;
}

void RunState::AnalyzeBest(std::map<std::string, double>* metrics, std::string* metrics_config, std::string* note) {
  metrics->clear();
  metrics_config->clear();
  if (!have_kb_) return;
  const std::string subject = "candidate:" + best_.hash;
  std::vector<Observation> obs;
  std::string sass;
  // One config at a time, so that --time can stop between them: a profile replays every kernel
  // of a call per counter pass, which for a multi-pass sort over a GiB is tens of seconds.
  std::vector<KernelProfile> profiles;
  const std::vector<std::string> configs = ConfigNames();
  for (const std::string& config : configs) {
    if (!FitsBeforeConfirmation(profile_s_per_config_)) {
      *note = std::to_string(profiles.size()) + " of " + std::to_string(configs.size()) +
              " configs profiled: cut by --time";
      break;
    }
    std::vector<KernelProfile> one;
    std::string perr;
    if (!ProfileKernel(services_.evaluator, best_.kernel, {config}, ProfileBound(EvaluationEstimate()), &one, &perr)) {
      spdlog::info("best candidate not profiled on {}: {}", config, perr);
      break;
    }
    profiles.insert(profiles.end(), std::make_move_iterator(one.begin()), std::make_move_iterator(one.end()));
  }
  if (!profiles.empty()) {
    HardwareSpec hw;
    std::string why;
    bool have_hw = ResolveHardware(services_.store, kb_, opts_.arch, device_, &hw, &why);
    for (KernelProfile& prof : profiles) {
      prof.label = subject;
      // Observations of what the candidate does on the GPU: facts about it, not hypotheses about
      // the hardware (those come from expert kernels and are confirmed by comparisons).
      std::vector<Observation> o = AnalyzeKernel(prof, op_.name, opts_.arch, have_hw ? &hw : nullptr, kb_);
      obs.insert(obs.end(), o.begin(), o.end());
      if (sass.empty()) sass = prof.sass;
    }
    *metrics = profiles.front().metrics;
    *metrics_config = profiles.front().config;
  }
  if (sass.empty()) {
    std::string derr;
    if (!DisassembleCubin(best_.kernel.cubin, &sass, &derr)) spdlog::info("claimed mechanisms not checked: {}", derr);
  }
  if (!sass.empty()) {
    std::vector<Observation> claims =
        CheckClaimedMechanisms(best_.proposal.candidate.manifest.mechanisms, ClassifySass(sass), kb_, op_.name,
                               opts_.arch, subject);
    std::string unverified;
    for (const Observation& o : claims)
      if (o.value == "unverified") unverified += (unverified.empty() ? "" : ", ") + o.key;
    summary_->knowledge_notes.push_back(
        "claims of the best checked against its SASS: " + std::to_string(claims.size()) + " checked" +
        (unverified.empty() ? ", all verified" : "; unverified (no such instructions): " + unverified));
    obs.insert(obs.end(), claims.begin(), claims.end());
  }
  int added = 0;
  std::string err;
  if (!obs.empty() && !services_.store->AddObservations(&obs, &added, &err))
    spdlog::warn("observations of the best not recorded: {}", err);
}

void RunState::RunAblations(const std::map<std::string, double>& best_metrics, const std::string& metrics_config,
                            std::string* note) {
  const Candidate& family = best_.proposal.candidate;
  if (family.manifest.controls.empty() || best_.proposal.family.empty()) return;
  const int budget = opts_.ablations >= 0 ? opts_.ablations : std::clamp(opts_.iterations / 8, 1, 4);
  const bool with_deltas = !best_metrics.empty() && !metrics_config.empty();
  int run = 0, recorded = 0;
  const std::vector<ParamAssignment> variants = AblationVariants(family, op_, best_.proposal.params, budget);
  for (const ParamAssignment& variant : variants) {
    // --time holds the end of the run too: an ablation (timed, and profiled on one config for
    // its metric deltas) runs only when it and the confirmation after it still fit.
    if (!FitsBeforeConfirmation(EvaluationEstimate() + (with_deltas ? profile_s_per_config_ : 0))) {
      *note = "cut by --time after " + std::to_string(run) + " of " + std::to_string(variants.size());
      break;
    }
    CompileResult compiled = services_.compiler->CompileNow(CandidateCompileRequest(family, variant, opts_.arch));
    if (!compiled.ok) continue;
    EvalRequest req;
    req.op = &op_;
    req.candidate = CandidateKernel("ablation", compiled.cubin, family, variant);
    req.incumbent = best_.kernel;  // interleaved against the best itself
    req.golden = golden_;
    req.configs = opts_.configs;
    req.seeds = opts_.seeds;
    req.deadline_s = opts_.deadline_s;
    EvalResult result = services_.evaluator->Evaluate(req);
    ++run;
    std::vector<SettingComparison> found = CompareAblation(op_, family.manifest, best_.proposal.params, variant, result);
    if (found.empty()) continue;
    // Metric deltas: what the moved setting changes on the GPU, on the config the best was
    // profiled on, when both can be profiled.
    if (with_deltas && FitsBeforeConfirmation(profile_s_per_config_)) {
      std::vector<KernelProfile> profiles;
      std::string perr;
      if (ProfileKernel(services_.evaluator, req.candidate, {metrics_config}, ProfileBound(EvaluationEstimate()), &profiles,
                        &perr) &&
          !profiles.empty())
        for (const auto& [metric, value] : profiles.front().metrics) {
          auto it = best_metrics.find(metric);
          if (it != best_metrics.end())
            for (SettingComparison& c : found) c.metric_deltas[metric] = it->second - value;
        }
    }
    for (const SettingComparison& c : found) {
      RecordLearned(c);
      ++recorded;
    }
  }
  if (run > 0)
    summary_->knowledge_notes.push_back("ablations of the best: " + std::to_string(run) + " timed against it, " +
                                        std::to_string(recorded) + " comparison(s) recorded");
}

void RunState::SummarizeLearned() {
  summary_->decisions_learned.clear();
  std::vector<const DecisionRecord*> changed;
  for (const auto& [id, d] : learned_) changed.push_back(&d);
  auto rank = [](const DecisionRecord* d) { return d->verdict == DecisionVerdict::validated ? 0 : d->verdict == DecisionVerdict::refuted ? 1 : 2; };
  std::stable_sort(changed.begin(), changed.end(), [&](const DecisionRecord* a, const DecisionRecord* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a->comparisons > b->comparisons;
  });
  for (const DecisionRecord* d : changed) summary_->decisions_learned.push_back(std::string(DecisionVerdictName(d->verdict)) + ": " + d->text);
}

bool RunState::ProfileKernel(Evaluator* evaluator, const KernelUnderTest& kernel, const std::vector<std::string>& configs,
                             double bound_s, std::vector<KernelProfile>* profiles, std::string* err) {
  ProfileRequest req;
  req.op = &op_;
  req.kernel = kernel;
  req.configs = configs;
  req.bound_s = bound_s;
  const auto start = std::chrono::steady_clock::now();
  if (!evaluator->Profile(req, profiles, err)) {
    // What a profile cut by its bound took is still a lower bound of what one costs.
    const double configs_asked = configs.empty() ? static_cast<double>(op_.configs.size()) : configs.size();
    profile_s_per_config_ = std::max(profile_s_per_config_, SecondsSince(start) / std::max(1.0, configs_asked));
    return false;
  }
  // Each profile carries what it cost on the GPU machine (KernelProfile::wall_s).
  for (const KernelProfile& p : *profiles) profile_s_per_config_ = std::max(profile_s_per_config_, p.wall_s);
  return true;
}

double RunState::ProfileBound(double reserve_s) const {
  return opts_.time_s > 0 ? std::max(1e-3, SecondsLeft() - reserve_s) : 0;  // never 0 (unbounded) under --time
}

std::string RunState::ProfileCandidate(Evaluator* evaluator, const KernelUnderTest& kernel, const std::string& hash) {
  if (!evaluator || opts_.compile_only || !services_.agent->WantsProfiles()) return "";
  // Under --time the profile may take what the end of the run leaves; none when nothing is left.
  if (opts_.time_s > 0 && SecondsLeft() <= EndWorkEstimate()) return "";
  std::vector<KernelProfile> profiles;
  std::string err;
  if (!ProfileKernel(evaluator, kernel, opts_.configs, ProfileBound(EndWorkEstimate()), &profiles, &err)) {
    spdlog::warn("new best {} not profiled: {}", hash.substr(0, 8), err);
    return "";
  }
  // Kept in the store, so that a resumed run shows its agent the same analysis of this attempt.
  for (KernelProfile prof : profiles) {
    if (!services_.store) break;
    ProfileRecord rec;
    rec.operator_name = op_.name;
    rec.arch = opts_.arch;
    rec.subject = CandidateSubject(hash);
    prof.label = rec.subject;
    rec.profile = std::move(prof);
    if (!services_.store->AddProfile(&rec, &err))
      spdlog::warn("the profile of new best {} on {} not recorded: {}", hash.substr(0, 8), rec.profile.config, err);
  }
  return CandidateAnalysis(services_.store, kb_, op_, opts_.arch, device_, std::move(profiles), hash);
}

}  // namespace forgek
