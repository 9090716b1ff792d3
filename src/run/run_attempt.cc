// One attempt: a proposal evaluated on the configs it supports, recorded, and kept when it is the best.
#include "run_state.h"

#include <algorithm>
#include <set>

#include "forgek/core/device_library.h"
#include "forgek/seal/dispatch.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"
#include "run_text.h"

namespace forgek {
namespace {

std::string FamilyOf(const Proposal& p) { return p.family; }

}  // namespace

bool RunState::RecordAttempt(const Proposal& p, const std::string& hash, const EvalResult* result, AttemptSummary* a,
                             std::string* attempt_id, std::string* err) {
  if (!services_.store) return true;
  CandidateRecord cand;
  cand.hash = hash;
  cand.operator_name = op_.name;
  cand.source = ExpandedSource(p.candidate.source);  // self-contained: the library code it was measured with
  cand.params_json = ParamsJson(p.params);
  cand.family = p.family;
  cand.mechanisms = p.candidate.manifest.mechanisms;
  bool inserted = false;
  if (!services_.store->PutCandidate(cand, &inserted, err)) return false;
  AttemptRecord rec;
  rec.run_id = run_id_;
  rec.iteration = a->iteration;
  rec.candidate_hash = hash;
  rec.outcome = a->outcome;
  rec.detail = a->feedback;
  rec.rationale = p.rationale;
  rec.geomean_speedup = a->geomean_speedup;
  if (result) {
    rec.wall_s = result->wall_s;
    for (const ConfigResult& c : result->configs) {
      AttemptMeasurement m;
      m.config = c.config;
      m.correct = c.correctness.ok;
      m.rel_l2 = c.correctness.rel_l2;
      m.max_abs = c.correctness.max_abs;
      m.candidate_us = c.candidate.median_us;
      m.incumbent_us = c.incumbent.median_us;
      m.rel_noise = c.candidate.rel_noise;
      m.speedup = c.speedup;
      m.sol_pct = c.sol_pct;
      rec.measurements.push_back(m);
    }
  }
  if (!services_.store->AddAttempt(&rec, err)) return false;
  *attempt_id = rec.id;
  return true;
}

RunState::Evaluated RunState::EvaluateProposal(const Proposal& p, const CompileResult& compiled,
                                               Evaluator* evaluator) const {
  Evaluated e{p, compiled, EvalResult{}, false, evaluator};
  if (!compiled.ok || opts_.compile_only || !evaluator) return e;
  EvalRequest req;
  req.op = &op_;
  req.candidate = CandidateKernel("candidate", compiled.cubin, p.candidate, p.params);
  req.golden = golden_;
  req.configs = SupportedConfigs(p);
  req.seeds = opts_.seeds;
  req.deadline_s = opts_.deadline_s;
  const KernelUnderTest candidate = req.candidate;
  e.result = EvaluateByConfig(
      evaluator, req, [&](const std::string&) { return &candidate; },
      [&](const std::string& c) { return &incumbent_.For(c); });
  e.evaluated = true;
  return e;
}

bool RunState::Attempt(const Proposal& p, const CompileResult& compiled, std::string* err) {
  return Commit(EvaluateProposal(p, compiled, services_.evaluator), err);
}

std::vector<std::string> RunState::SupportedConfigs(const Proposal& p) const {
  // The configs an instance serves are those its manifest resolves for (constraints and launch
  // limits): a search instance may serve only some, measured there for a dispatch.
  // At the run's device's SM count where the evaluator knows it, as the worker will resolve it.
  const std::vector<std::string> configs = ConfigNames();
  const int64_t num_sms = DeviceSmCountOr(services_.evaluator, opts_.arch);
  std::vector<std::string> supported;
  for (const std::string& name : configs) {
    ResolvedCandidate rc;
    Diagnostics diags;
    if (ResolveCandidate(p.candidate.manifest, op_, p.params, op_.FindConfig(name)->values, num_sms, &rc, &diags))
      supported.push_back(name);
  }
  // None: evaluated on every config, where the launch error says why; all: as the run asked.
  if (supported.empty() || supported.size() == configs.size()) return opts_.configs;
  return supported;
}

bool RunState::CoversEveryConfig(const EvalResult& r) const { return r.configs.size() >= ConfigNames().size(); }

bool RunState::Commit(const Evaluated& e, std::string* err) {
  const Proposal& p = e.proposal;
  const CompileResult& compiled = e.compiled;
  const EvalResult& result = e.result;
  const bool evaluated = e.evaluated;
  AttemptSummary a;
  a.iteration = static_cast<int>(history_.size());
  a.candidate_hash = CandidateHash(p.candidate.source, p.params);
  a.family = FamilyOf(p);
  a.params = p.params;
  a.source = p.candidate.source;
  a.mechanisms = p.candidate.manifest.mechanisms;
  a.parent = p.parent;
  a.change = p.change;
  a.cost_usd = p.cost_usd;
  a.tokens = p.tokens;
  if (!compiled.ok) {
    a.outcome = Outcome::compile_error;
    a.feedback = compiled.timed_out ? "compile timed out: " + compiled.Summary() : compiled.Summary();
    ShowCompileFailure(a, compiled);
  } else if (!evaluated) {
    // Not evaluated (--compile-only): compiled, never timed, no evidence about speed.
    a.outcome = Outcome::compiled;
    a.feedback = "compiled, not evaluated (--compile-only): " + compiled.Summary();
  } else {
    evaluation_s_ += result.wall_s;
    ++evaluations_;
    a.outcome = result.outcome;
    a.feedback = result.detail;
    a.geomean_speedup = OutcomeTimed(result.outcome) ? result.geomean_speedup : 0;
    if (OutcomeTimed(result.outcome)) {
      for (const ConfigResult& c : result.configs) {
        ConfigTime t{c.config, c.candidate.median_us, c.incumbent.median_us, c.sol_pct,
                     DirectionName(CompareConfig(c).direction)};
        a.configs.push_back(std::move(t));
      }
    }
    // Only a candidate measured on every config can be the best or sealed alone; one that serves
    // some configs is kept for a dispatch (measured_).
    const bool whole = OutcomeTimed(result.outcome) && CoversEveryConfig(result);
    const bool new_best = whole && result.geomean_speedup > (have_best_ ? best_.result.geomean_speedup : 0);
    const std::string label = "attempt " + std::to_string(a.iteration + 1);
    if (OutcomeTimed(result.outcome)) {
      measured_.push_back({p, CandidateKernel(label, compiled.cubin, p.candidate, p.params), result, a.candidate_hash,
                           Sha256Hex(compiled.cubin), a.iteration});
      PruneMeasured();
    }
    if (new_best || (whole && result.outcome == Outcome::faster)) {
      KernelUnderTest kernel = CandidateKernel(label, compiled.cubin, p.candidate, p.params);
      // Profiled for the agent when it beats every attempt of the run, those before a --resume
      // included (as in the run had it not stopped).
      if (new_best && result.geomean_speedup > history_best_)
        a.bottleneck = ProfileCandidate(e.evaluator, kernel, a.candidate_hash);
      Best candidate{p, std::move(kernel), result, a.candidate_hash, Sha256Hex(compiled.cubin), a.iteration};
      if (new_best) {
        have_best_ = true;
        best_ = candidate;
      }
      if (whole && result.outcome == Outcome::faster) KeepWinner(std::move(candidate));
    }
  }
  std::string attempt_id;
  if (!RecordAttempt(p, a.candidate_hash, evaluated ? &result : nullptr, &a, &attempt_id, err)) return false;
  if (evaluated) Learn(p, a.candidate_hash, attempt_id, result);

  double best = have_best_ ? best_.result.geomean_speedup : 0;
  since_best_ = (have_best_ && best_.iteration == a.iteration) ? 0 : since_best_ + 1;
  if (have_best_ && best_.iteration == a.iteration) ++summary_->improvements;
  iteration_of_.emplace(a.candidate_hash, a.iteration);
  ++attempts_this_run_;
  ++summary_->attempts;
  ++summary_->outcomes[OutcomeName(a.outcome)];
  summary_->best_so_far.push_back(best);
  history_.push_back(a);
  Progress(a);
  return true;
}

void RunState::FillConfigComparisons(const EvalResult& r) {
  summary_->configs.clear();
  std::vector<double> vs_expert;
  for (const ConfigResult& c : r.configs) {
    ConfigComparison cc;
    cc.config = c.config;
    cc.incumbent_us = c.incumbent.median_us;
    cc.best_us = c.candidate.median_us;
    cc.speedup = cc.best_us > 0 ? cc.incumbent_us / cc.best_us : 0;
    auto it = expert_us_.find(c.config);
    cc.expert_us = incumbent_.seal_id.empty() ? cc.incumbent_us : (it != expert_us_.end() ? it->second : 0);
    cc.speedup_vs_expert = cc.best_us > 0 && cc.expert_us > 0 ? cc.expert_us / cc.best_us : 0;
    cc.best_sol_pct = c.sol_pct;
    TimeComparison t = CompareConfig(c);
    cc.verdict = "best " + Fmt3(cc.speedup) + "x, " + DirectionWords(t.direction);
    cc.incumbent_sol_pct = cc.incumbent_us > 0 && c.sol_us > 0 ? 100.0 * c.sol_us / cc.incumbent_us : 0;
    cc.best_datasheet_sol_pct = c.datasheet_sol_pct;
    cc.incumbent_datasheet_sol_pct =
        cc.incumbent_us > 0 && c.datasheet_sol_us > 0 ? 100.0 * c.datasheet_sol_us / cc.incumbent_us : 0;
    cc.floor_us = c.floor_us;
    if (cc.speedup_vs_expert > 0) vs_expert.push_back(cc.speedup_vs_expert);
    summary_->configs.push_back(cc);
  }
  summary_->best_speedup_vs_expert = Geomean(vs_expert);
}

void RunState::KeepWinner(Best candidate) {
  const size_t keep = static_cast<size_t>(std::max(opts_.confirm, 1));
  auto at = std::find_if(winners_.begin(), winners_.end(), [&](const Best& w) {
    return candidate.result.geomean_speedup > w.result.geomean_speedup;
  });
  if (at == winners_.end() && winners_.size() >= keep) return;
  winners_.insert(at, std::move(candidate));
  if (winners_.size() > keep) winners_.pop_back();
}

EvalResult RunState::EvaluateByConfig(Evaluator* evaluator, EvalRequest req, const KernelFor& candidate_for,
                                      const KernelFor& incumbent_for) const {
  std::vector<std::string> configs = req.configs.empty() ? ConfigNames() : req.configs;
  // Configs that share both kernels go in one request, in the order they first appear.
  std::vector<std::pair<std::pair<const KernelUnderTest*, const KernelUnderTest*>, std::vector<std::string>>> groups;
  for (const std::string& c : configs) {
    auto key = std::make_pair(candidate_for(c), incumbent_for(c));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {c}});
    else it->second.push_back(c);
  }
  if (groups.size() <= 1) {
    if (!groups.empty()) {
      req.candidate = *groups[0].first.first;
      req.incumbent = *groups[0].first.second;
    }
    return evaluator->Evaluate(req);
  }
  std::vector<EvalResult> parts;
  for (const auto& [kernels, group] : groups) {
    EvalRequest part = req;
    part.candidate = *kernels.first;
    part.incumbent = *kernels.second;
    part.configs = group;
    parts.push_back(evaluator->Evaluate(part));
  }
  return MergeResults(parts, configs);
}

void RunState::PruneMeasured() {
  // Only a candidate that is the fastest measured on some config, or the fallback, can serve.
  Dispatch d = AssembleDispatch(ConfigNames(), DispatchCandidates(), opts_.min_gain);
  std::set<int> keep;
  const int measured = static_cast<int>(measured_.size());  // the expert, past them, is not pruned
  for (const DispatchChoice& c : d.configs)
    if (c.best_candidate >= 0 && c.best_candidate < measured) keep.insert(c.best_candidate);
  if (d.fallback >= 0 && d.fallback < measured) keep.insert(d.fallback);
  std::vector<Best> kept;
  for (int i : keep) kept.push_back(std::move(measured_[i]));
  measured_ = std::move(kept);
}

}  // namespace forgek
