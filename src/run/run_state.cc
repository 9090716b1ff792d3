// One run's steps: begin (incumbent, analysis, records), attempts (evaluate, record, learn), finish (seal).
#include "run/run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/outside_shapes.h"
#include "forgek/device_library.h"
#include "forgek/dispatch.h"
#include "forgek/hash.h"
#include "forgek/params.h"
#include "forgek/seal.h"
#include "forgek/store.h"
#include "forgek/verdict.h"
#include "run/ablation.h"
#include "run/incumbent_analysis.h"
#include "run/incumbent_view.h"
#include "run/resume_history.h"
#include "core/json_parse.h"

namespace forgek {
namespace {

bool Timed(Outcome o) { return OutcomeTimed(o); }

double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string Fmt3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// The families of `op` written for `arch`; the others are skipped with a note (a family that does
// not load degrades the run).
std::vector<Candidate> LoadFamilies(const OperatorSpec& op, const std::string& arch,
                                    std::vector<DegradedStage>* degraded) {
  std::vector<Candidate> families;
  for (const std::string& rel : op.families) {
    Candidate c;
    Diagnostics diags;
    std::string path = (std::filesystem::path(op.dir) / rel).string();
    if (!LoadCandidateFile(path, &c, &diags))
      degraded->push_back({"families", "family " + rel + " skipped: " + FormatDiagnostics(diags)});
    else if (!c.manifest.ForArch(arch))
      spdlog::info("family {} skipped: it is for {}, not {}", rel, c.manifest.ArchsText(), arch);
    else
      families.push_back(std::move(c));
  }
  return families;
}

std::string FamilyOf(const Proposal& p) { return p.family; }

// Why a timed attempt is `slower` although its geomean may be faster: the configs slower beyond
// noise, named (" (geomean; slower on large 0.812x)"); "" for an attempt that is not slower.
std::string SlowerConfigsText(const AttemptSummary& a) {
  if (a.outcome != Outcome::slower) return "";
  std::string configs;
  for (const ConfigTime& c : a.configs)
    if (c.verdict == DirectionName(Direction::slower) && c.candidate_us > 0)
      configs += (configs.empty() ? "" : ", ") + c.config + " " + Fmt3(c.incumbent_us / c.candidate_us) + "x";
  return configs.empty() ? "" : " (geomean; slower on " + configs + ")";
}

// Why a run that reached its end failed, "" when it did not: the agent gave up (the stop reason
// says why), or a --compile-only run tried candidates and not one compiled.
std::string EndFailure(const RunOptions& opts, const RunSummary& s) {
  if (s.stop_reason.rfind("agent: ", 0) == 0) return "the agent stopped the run: " + s.stop_reason.substr(7);
  if (!opts.compile_only || s.attempts == 0 || s.stop_reason == "interrupted") return "";
  auto compiled = s.outcomes.find(OutcomeName(Outcome::compiled));
  if (compiled != s.outcomes.end() && compiled->second > 0) return "";
  return "every one of the " + std::to_string(s.attempts) +
         " candidates failed to compile (see the compiler errors above)";
}

// The expert reference as a candidate against a sealed incumbent: `seal_vs_expert` (the seal
// timed against the expert, per config, interleaved in one worker) with its two sides swapped, so
// that the dispatch reads it as it reads any attempt (speedup = seal / expert). The verdict is the
// one rule's on these same numbers.
EvalResult ExpertAgainstSeal(const EvalResult& seal_vs_expert) {
  EvalResult r;
  r.wall_s = seal_vs_expert.wall_s;
  for (ConfigResult c : seal_vs_expert.configs) {
    std::swap(c.candidate, c.incumbent);
    const double median = c.candidate.median_us;
    c.speedup = median > 0 ? c.incumbent.median_us / median : 0;
    c.sol_pct = median > 0 ? c.sol_us / median * 100 : 0;
    c.datasheet_sol_pct = median > 0 ? c.datasheet_sol_us / median * 100 : 0;
    r.configs.push_back(c);
  }
  JudgeTimed(&r);
  return r;
}

}  // namespace

RunState::RunState(const OperatorSpec& op, const RunOptions& opts, RunServices& services, RunSummary* summary)
    : op_(op), opts_(opts), services_(services), summary_(summary) {}

double RunState::SecondsRun() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void RunState::AddStage(const std::string& name, double seconds, const std::string& note) {
  summary_->stages.push_back({name, seconds, note});
}

double RunState::EndWorkEstimate() const {
  if (!have_best_ || opts_.compile_only || !services_.evaluator || evaluations_ == 0) return 0;
  const double evaluation = evaluation_s_ / evaluations_;
  const double profile = profile_s_per_config_ * static_cast<double>(ConfigNames().size());
  const bool ablations = opts_.ablations != 0 && !best_.proposal.candidate.manifest.controls.empty();
  // Confirmation on fresh seeds, the best's profile, and one ablation (evaluated and profiled).
  return evaluation + (have_kb_ ? profile : 0) + (ablations ? evaluation + profile : 0);
}

bool RunState::Begin(std::string* err) {
  const auto begin_start = std::chrono::steady_clock::now();
  *summary_ = RunSummary{};
  summary_->operator_name = op_.name;
  summary_->arch = opts_.arch;
  summary_->agent = services_.agent->Name();
  std::vector<DegradedStage> skipped;
  families_ = LoadFamilies(op_, opts_.arch, &skipped);
  for (const DegradedStage& d : skipped) Degrade(d.stage, d.reason);
  if (families_.empty() && !op_.seed.empty()) {
    // An operator without families searches its seed: the seed's param domains when it declares
    // some, else the seed alone (measured and analysed against the incumbent, sealed when it wins).
    Candidate seed;
    Diagnostics diags;
    std::string path = (std::filesystem::path(op_.dir) / op_.seed).string();
    bool loaded = LoadCandidateFile(path, &seed, &diags);
    if (loaded && !seed.manifest.ForArch(opts_.arch)) {
      spdlog::info("seed {} skipped: it is for {}, not {}", op_.seed, seed.manifest.ArchsText(), opts_.arch);
    } else if (loaded) {
      if (seed.manifest.IsFamily())
        spdlog::info("{} declares no families: its seed {} is the search space ({} params with domains)", op_.name,
                     op_.seed, seed.manifest.params.size());
      else
        spdlog::info("{} declares no families and its seed {} fixes every param: the seed is the only candidate",
                     op_.name, op_.seed);
      families_.push_back(std::move(seed));
    } else {
      Degrade("seed", "seed " + op_.seed + " skipped: " + FormatDiagnostics(diags));
    }
  }

  Diagnostics kb_diags;
  std::string kb_dir = KnowledgeDir();
  have_kb_ = !kb_dir.empty() && LoadKnowledgeBase(kb_dir, &kb_, &kb_diags);
  if (!have_kb_)
    Degrade("knowledge", "knowledge base not loaded: " +
                             (kb_dir.empty() ? std::string("no knowledge/ folder") : FormatDiagnostics(kb_diags)));

  for (const ConfigSpec& c : op_.configs) {
    if (!opts_.configs.empty() && std::find(opts_.configs.begin(), opts_.configs.end(), c.name) == opts_.configs.end())
      continue;
    std::string r = ShapeRegime(op_, c.name);
    if (std::find(regimes_.begin(), regimes_.end(), r) == regimes_.end()) regimes_.push_back(r);
  }

  if (!PickIncumbent(op_, opts_.arch, services_.store, *services_.compiler, &incumbent_, err)) return false;
  for (const std::string& note : incumbent_.skipped_seals) Degrade("incumbent", note);
  if (incumbent_.seal_id.empty()) {
    expert_ = incumbent_;
  } else if (!PrepareExpertReference(op_, opts_.arch, *services_.compiler, &expert_, err)) {
    return false;
  }
  ServeOutsideTable(op_, expert_.kernel, &incumbent_);
  if (services_.evaluator && !opts_.compile_only &&
      !PrepareGolden(op_, opts_.arch, *services_.compiler, &golden_, err))
    return false;
  if (services_.evaluator) {
    device_ = services_.evaluator->DeviceName();
    driver_ = services_.evaluator->DriverVersion();
  }
  summary_->device = device_;

  // A sealed incumbent is re-checked against the expert reference: it must still be right on
  // this machine, and its times give the "vs expert" column.
  if (services_.evaluator && !incumbent_.seal_id.empty() && !opts_.compile_only) {
    EvalRequest req;
    req.op = &op_;
    req.golden = golden_;
    req.configs = opts_.configs;
    req.seeds = opts_.seeds;
    req.deadline_s = opts_.deadline_s;
    EvalResult r = EvaluateByConfig(
        services_.evaluator, req, [&](const std::string& c) { return &incumbent_.For(c); },
        [&](const std::string&) { return &expert_.kernel; });
    if (!Timed(r.outcome)) {
      Degrade("incumbent", incumbent_.label + " no longer passes (" + OutcomeName(r.outcome) + ": " + r.detail +
                               "); the expert reference is the incumbent");
      incumbent_ = expert_;
    } else {
      for (const ConfigResult& c : r.configs) expert_us_[c.config] = c.incumbent.median_us;
      expert_vs_incumbent_ = ExpertAgainstSeal(r);
      spdlog::info("incumbent {}: {}x the expert reference (geomean)", incumbent_.label, Fmt3(r.geomean_speedup));
    }
  }
  summary_->incumbent = incumbent_.label;
  // A dispatch incumbent is shown to the agent config by config: each is timed against its own.
  if (!DescribeDispatchIncumbent(incumbent_, expert_, ConfigNames(), services_.store, &incumbent_dispatch_, err))
    return false;

  // Analyse the incumbent: what the hardware shows about it becomes observations and hypotheses.
  if (services_.evaluator && !opts_.compile_only) {
    const auto analysis_start = std::chrono::steady_clock::now();
    AnalysisInputs in{&op_, opts_.arch, device_, driver_, services_.evaluator, services_.store,
                      have_kb_ ? &kb_ : nullptr, ConfigNames()};
    IncumbentAnalysis analysis = AnalyzeIncumbent(in, incumbent_);
    for (const DegradedStage& d : analysis.degraded) Degrade(d.stage, d.reason);
    incumbent_profiles_ = std::move(analysis.profiles);
    incumbent_summary_ = std::move(analysis.summary);
    profile_s_per_config_ = analysis.profiled > 0 ? analysis.profile_s / analysis.profiled : 0;
    if (services_.store)
      spdlog::info("incumbent analysed: {} configs profiled, {} from the store", analysis.profiled, analysis.cached);
    AddStage("incumbent analysis", SecondsSince(analysis_start),
             analysis.cached > 0 ? std::to_string(analysis.cached) + " of " +
                                       std::to_string(analysis.cached + analysis.profiled) + " configs from the store"
                                 : "");
  }

  if (services_.store) {
    if (!opts_.resume_run.empty()) {
      RunRecord run;
      bool found = false;
      if (!services_.store->GetRun(opts_.resume_run, &run, &found, err)) return false;
      if (!found) {
        *err = "run " + opts_.resume_run + " is not in the store " + services_.store->path();
        return false;
      }
      if (run.operator_name != op_.name || run.arch != opts_.arch) {
        *err = "run " + run.id + " optimised " + run.operator_name + " on " + run.arch + ", not " + op_.name + " on " +
               opts_.arch;
        return false;
      }
      // The history as the run had it (sources, times, mechanisms, analyses): the agent offers the
      // same parents as if the run had never stopped.
      ResumeSource from{services_.store, &op_, opts_.arch, device_, &kb_};
      std::vector<std::string> notes;
      if (!LoadResumedHistory(from, run.id, &history_, &notes, err)) return false;
      for (const std::string& note : notes) Degrade("resume", note);
      for (const AttemptSummary& a : history_)
        if (OutcomeTimed(a.outcome)) history_best_ = std::max(history_best_, a.geomean_speedup);
      run_id_ = run.id;
      spdlog::info("resuming run {} with {} earlier attempts", run_id_, history_.size());
    } else {
      OperatorRecord orec{op_.name, op_.category, op_.description};
      if (!services_.store->UpsertOperator(orec, err)) return false;
      RunRecord run;
      run.operator_name = op_.name;
      run.arch = opts_.arch;
      run.device = device_;
      run.agent = services_.agent->Name();
      run.incumbent = incumbent_.seal_id.empty() ? "reference" : incumbent_.seal_id;
      nlohmann::json budget = {{"iterations", opts_.iterations}, {"time_s", opts_.time_s},
                               {"patience", opts_.patience},     {"compile_only", opts_.compile_only}};
      run.summary_json = nlohmann::json{{"budget", budget}}.dump();
      if (!services_.store->AddRun(&run, err)) return false;
      run_id_ = run.id;
    }
  }
  summary_->run_id = run_id_;
  if (services_.store) {
    std::string perr;
    if (!LoadPriorResults(*services_.store, op_, opts_.arch, opts_.configs, run_id_, kPriorResults, &prior_results_,
                          &perr))
      Degrade("prior_results", "results of earlier runs not loaded: " + perr);
    else if (!prior_results_.empty())
      spdlog::info("{} results of earlier runs to start from; best: {} {}", prior_results_.size(),
                   prior_results_[0].family, prior_results_[0].source);
  }
  if (services_.store) {
    // Families a model wrote that won in earlier runs are searched like the operator's own.
    std::vector<Candidate> invented;
    std::string ferr;
    if (!LoadInventedFamilies(*services_.store, op_, opts_.arch, kInventedFamilies, &invented, &ferr)) {
      Degrade("families", "families a model wrote in earlier runs not loaded: " + ferr);
    } else {
      for (Candidate& f : invented) {
        spdlog::info("family {} (written by a model in an earlier run, won there) is searched too", f.path);
        families_.push_back(std::move(f));
      }
    }
  }
  for (size_t i = 0; i < history_.size(); ++i) iteration_of_.emplace(history_[i].candidate_hash, static_cast<int>(i));
  if (services_.run_started && !run_id_.empty()) services_.run_started(run_id_);
  double begin_s = SecondsSince(begin_start);
  for (const RunStage& stage : summary_->stages) begin_s -= stage.seconds;
  summary_->stages.insert(summary_->stages.begin(), RunStage{"start", std::max(begin_s, 0.0), ""});
  return true;
}

std::string RunState::BudgetSpent(double elapsed_s) const {
  if (services_.stop_requested && services_.stop_requested()) return "interrupted";
  if (opts_.iterations > 0 && attempts_this_run_ >= opts_.iterations) return "iterations";
  if (opts_.time_s > 0 && elapsed_s + EndWorkEstimate() >= opts_.time_s) return "time";
  if (opts_.patience > 0 && since_best_ >= opts_.patience) return "patience";
  return "";
}

int RunState::AttemptsLeft() const {
  return opts_.iterations > 0 ? std::max(0, opts_.iterations - attempts_this_run_) : 1 << 20;
}

ProposalContext RunState::Context() {
  ProposalContext ctx;
  ctx.op = &op_;
  ctx.arch = opts_.arch;
  ctx.hardware = device_.empty() ? "GPU arch " + opts_.arch : device_ + " (" + opts_.arch + ")";
  ctx.incumbent_analysis = incumbent_profiles_;
  ctx.incumbent_summary = incumbent_summary_;
  ctx.history = history_;
  ctx.prior_results = prior_results_;
  ctx.families = families_;
  ctx.incumbent_source = incumbent_.has_source ? &incumbent_.source : nullptr;
  ctx.incumbent_dispatch = incumbent_dispatch_;
  if (services_.store) {
    std::string err;
    RetrievalScope scope{opts_.arch, op_.category, op_.name, regimes_};
    if (!RetrieveDecisions(*services_.store, scope, 32, &ctx.decisions, &err)) {
      Degrade("retrieval", "decisions not retrieved: " + err);
    } else if (!retrieval_logged_) {
      retrieval_logged_ = true;
      std::string regimes;
      for (const std::string& r : regimes_) regimes += (regimes.empty() ? "" : ",") + r;
      std::string line = "knowledge retrieved for " + op_.name + " (" + op_.category + ", " + opts_.arch + ", regimes " +
                         regimes + "): " + DescribeRetrieval(ctx.decisions);
      spdlog::info("{}", line);
      summary_->knowledge_notes.push_back(line);
    }
  }
  return ctx;
}

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

void RunState::Learn(const Proposal& p, const std::string& hash, const std::string& attempt_id,
                     const EvalResult& result) {
  // A speedup over the incumbent says nothing about any one mechanism: only pairs of attempts that
  // differ in the params of one control group do.
  if (!services_.store || !Timed(result.outcome) || p.family.empty() || p.candidate.manifest.controls.empty()) return;
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

void RunState::AnalyzeBest(std::map<std::string, double>* metrics) {
  metrics->clear();
  if (!have_kb_) return;
  const std::string subject = "candidate:" + best_.hash;
  std::vector<Observation> obs;
  std::string sass;
  ProfileRequest preq;
  preq.op = &op_;
  preq.kernel = best_.kernel;
  preq.configs = opts_.configs;
  std::vector<KernelProfile> profiles;
  std::string perr;
  if (services_.evaluator->Profile(preq, &profiles, &perr)) {
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
    if (!profiles.empty()) *metrics = profiles.front().metrics;
  } else {
    spdlog::info("best candidate not profiled: {}", perr);
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

void RunState::RunAblations(const std::map<std::string, double>& best_metrics, std::string* note) {
  const Candidate& family = best_.proposal.candidate;
  if (family.manifest.controls.empty() || best_.proposal.family.empty()) return;
  const int budget = opts_.ablations >= 0 ? opts_.ablations : std::clamp(opts_.iterations / 8, 1, 4);
  int run = 0, recorded = 0;
  for (const ParamAssignment& variant : AblationVariants(family, op_, best_.proposal.params, budget)) {
    // --time holds the end of the run too: the first ablation was reserved, the rest fit or wait
    // for another run.
    if (run > 0 && opts_.time_s > 0 && SecondsRun() + EndWorkEstimate() >= opts_.time_s) {
      *note = "cut by --time after " + std::to_string(run);
      break;
    }
    CompileRequest creq;
    creq.name = family.path.empty() ? "candidate.cu" : std::filesystem::path(family.path).filename().string();
    creq.source = family.source;
    creq.arch = opts_.arch;
    creq.options = ParamDefines(variant);
    CompileResult compiled = services_.compiler->CompileNow(creq);
    if (!compiled.ok) continue;
    EvalRequest req;
    req.op = &op_;
    req.candidate.label = "ablation";
    req.candidate.cubin = compiled.cubin;
    req.candidate.manifest = family.manifest;
    req.candidate.params = variant;
    req.incumbent = best_.kernel;  // interleaved against the best itself
    req.golden = golden_;
    req.configs = opts_.configs;
    req.seeds = opts_.seeds;
    req.deadline_s = opts_.deadline_s;
    EvalResult result = services_.evaluator->Evaluate(req);
    ++run;
    std::vector<SettingComparison> found = CompareAblation(op_, family.manifest, best_.proposal.params, variant, result);
    if (found.empty()) continue;
    // Metric deltas: what the moved setting changes on the GPU, when both can be profiled.
    if (!best_metrics.empty()) {
      ProfileRequest preq;
      preq.op = &op_;
      preq.kernel = req.candidate;
      preq.configs = opts_.configs;
      std::vector<KernelProfile> profiles;
      std::string perr;
      if (services_.evaluator->Profile(preq, &profiles, &perr) && !profiles.empty())
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
  auto rank = [](const DecisionRecord* d) { return d->verdict == "validated" ? 0 : d->verdict == "refuted" ? 1 : 2; };
  std::stable_sort(changed.begin(), changed.end(), [&](const DecisionRecord* a, const DecisionRecord* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a->comparisons > b->comparisons;
  });
  for (const DecisionRecord* d : changed) summary_->decisions_learned.push_back(d->verdict + ": " + d->text);
}

RunState::Evaluated RunState::EvaluateProposal(const Proposal& p, const CompileResult& compiled,
                                               Evaluator* evaluator) const {
  Evaluated e{p, compiled, EvalResult{}, false, evaluator};
  if (!compiled.ok || opts_.compile_only || !evaluator) return e;
  EvalRequest req;
  req.op = &op_;
  req.candidate.label = "candidate";
  req.candidate.cubin = compiled.cubin;
  req.candidate.manifest = p.candidate.manifest;
  req.candidate.params = p.params;
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
  const std::vector<std::string> configs = ConfigNames();
  std::vector<std::string> supported;
  for (const std::string& name : configs) {
    ResolvedCandidate rc;
    Diagnostics diags;
    if (ResolveCandidate(p.candidate.manifest, op_, p.params, op_.FindConfig(name)->values, &rc, &diags))
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
    a.geomean_speedup = Timed(result.outcome) ? result.geomean_speedup : 0;
    if (Timed(result.outcome)) {
      for (const ConfigResult& c : result.configs) {
        ConfigTime t{c.config, c.candidate.median_us, c.incumbent.median_us, c.sol_pct,
                     DirectionName(CompareConfig(c).direction)};
        a.configs.push_back(std::move(t));
      }
    }
    // Only a candidate measured on every config can be the best or sealed alone; one that serves
    // some configs is kept for a dispatch (measured_).
    const bool whole = Timed(result.outcome) && CoversEveryConfig(result);
    const bool new_best = whole && result.geomean_speedup > (have_best_ ? best_.result.geomean_speedup : 0);
    if (Timed(result.outcome)) {
      KernelUnderTest kernel;
      kernel.label = "attempt " + std::to_string(a.iteration + 1);
      kernel.cubin = compiled.cubin;
      kernel.manifest = p.candidate.manifest;
      kernel.params = p.params;
      measured_.push_back({p, std::move(kernel), result, a.candidate_hash, Sha256Hex(compiled.cubin), a.iteration});
      PruneMeasured();
    }
    if (new_best || (whole && result.outcome == Outcome::faster)) {
      KernelUnderTest kernel;
      kernel.label = "attempt " + std::to_string(a.iteration + 1);
      kernel.cubin = compiled.cubin;
      kernel.manifest = p.candidate.manifest;
      kernel.params = p.params;
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

void RunState::Progress(const AttemptSummary& a) {
  if (!services_.progress) return;
  std::string counts;
  for (const auto& [name, n] : summary_->outcomes) counts += " " + name + "=" + std::to_string(n);
  std::string line = "attempt " + std::to_string(summary_->attempts) +
                     (opts_.iterations > 0 ? "/" + std::to_string(opts_.iterations) : "") + " | " + OutcomeName(a.outcome);
  // A compile-only run times nothing: no speedup, no best, only what compiled.
  if (!opts_.compile_only) {
    if (Timed(a.outcome)) line += " " + Fmt3(a.geomean_speedup) + "x" + SlowerConfigsText(a);
    const size_t configs = ConfigNames().size();
    if (Timed(a.outcome) && a.configs.size() < configs)
      line += " (serves " + std::to_string(a.configs.size()) + " of " + std::to_string(configs) + " configs)";
    line += " | best " + Fmt3(have_best_ ? best_.result.geomean_speedup : 0) + "x vs incumbent";
  }
  line += " |" + counts;
  // How the agent proposes now, when it departs from its usual way (a model out of ideas whose
  // families the search tunes).
  std::string note = services_.agent->Note();
  if (!note.empty()) line += " | " + note;
  services_.progress(line);
}

// The compiler's words for a candidate that did not compile: the first lines at normal
// verbosity, the whole log with -v.
void RunState::ShowCompileFailure(const AttemptSummary& a, const CompileResult& compiled) const {
  constexpr size_t kLinesShown = 8;
  std::string text = compiled.log.empty() ? compiled.Summary() : compiled.log;
  std::string head;
  size_t lines = 0, at = 0;
  while (at < text.size() && lines < kLinesShown) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    head += "\n  " + text.substr(at, end - at);
    at = end + 1;
    ++lines;
  }
  std::string who = "attempt " + std::to_string(summary_->attempts + 1) + " (" +
                    (a.family.empty() ? std::string("free-form") : a.family) + ")";
  if (at < text.size()) {
    spdlog::warn("{} did not compile:{}\n  ... (-v shows the whole compiler log)", who, head);
    spdlog::debug("{}: the whole compiler log:\n{}", who, text);
  } else {
    spdlog::warn("{} did not compile:{}", who, head);
  }
}

void RunState::Degrade(const std::string& stage, const std::string& reason) {
  for (const DegradedStage& d : summary_->degraded)
    if (d.stage == stage && d.reason == reason) return;
  spdlog::warn("{} degraded: {}", stage, reason);
  summary_->degraded.push_back({stage, reason});
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

bool RunState::SealBest(std::string* err) {
  if (!SealingAllowed()) return true;
  // A search measurement can be lucky: each winner, best first, is confirmed before it is sealed,
  // and the next one gets its chance when a confirmation does not hold.
  std::string reasons;
  bool shown = false;
  for (const Best& winner : winners_) {
    bool sealed = false;
    std::string why;
    EvalResult confirmation;
    if (!ConfirmAndSeal(winner, &confirmation, &sealed, &why, err)) return false;
    if (sealed) return true;
    // The summary's per-config table shows the first confirmation that failed: the best winner's.
    if (!shown && Timed(confirmation.outcome)) {
      FillConfigComparisons(confirmation);
      shown = true;
    }
    reasons += (reasons.empty() ? "" : "; ") + std::string("attempt ") + std::to_string(winner.iteration + 1) +
               " (" + Fmt3(winner.result.geomean_speedup) + "x in the search): " + why;
  }
  summary_->seal_reason = "not sealed: " + std::to_string(winners_.size()) +
                          (winners_.size() == 1 ? " candidate" : " candidates") +
                          " faster in the search, none held on confirmation: " + reasons;
  return true;
}

bool RunState::ConfirmAndSeal(const Best& winner, EvalResult* confirmation_out, bool* sealed, std::string* why,
                              std::string* err) {
  *sealed = false;
  // Confirmation on fresh seeds with a fresh timing: a lucky measurement is not sealed.
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  *confirmation_out = EvaluateByConfig(
      services_.evaluator, req, [&](const std::string&) { return &winner.kernel; },
      [&](const std::string& c) { return &incumbent_.For(c); });
  const EvalResult& confirmation = *confirmation_out;
  SealVerdict verdict = DecideSeal(confirmation, op_.configs.size(), opts_.min_gain);
  if (!verdict.seal) {
    *why = verdict.reason;
    return true;
  }
  // A seal serves every shape its kernel accepts: it must be right beyond the suite too.
  if (!CheckOutsideSuite({{KernelText(winner), &winner.kernel}}, why)) return true;
  nlohmann::json metadata = {{"family", winner.proposal.family},
                             {"mechanisms", winner.proposal.candidate.manifest.mechanisms},
                             {"rationale", winner.proposal.rationale}};
  if (!WriteSeal(winner, confirmation, verdict, std::move(metadata), {}, err)) return false;
  *sealed = true;
  return true;
}

bool RunState::WriteSeal(const Best& primary, const EvalResult& confirmation, const SealVerdict& verdict,
                         nlohmann::json metadata, const std::map<std::string, int>& kernel_of_config,
                         std::string* err) {
  FillConfigComparisons(confirmation);
  SealOrigin origin;
  origin.operator_name = op_.name;
  origin.arch = opts_.arch;
  origin.candidate_hash = primary.hash;
  origin.cubin_sha256 = primary.cubin_sha256;
  origin.params = primary.proposal.params;
  origin.family = metadata.value("family", std::string());
  origin.rationale = metadata.value("rationale", std::string());
  if (metadata.contains("mechanisms") && metadata["mechanisms"].is_array())
    for (const nlohmann::json& m : metadata["mechanisms"])
      if (m.is_string()) origin.mechanisms.push_back(m.get<std::string>());
  if (metadata.contains("dispatch")) origin.dispatch_json = metadata["dispatch"].dump();
  origin.kernel_of_config = kernel_of_config;
  origin.parent = incumbent_.seal_id;
  origin.incumbent_label = incumbent_.label;
  origin.run_id = run_id_;
  origin.toolchain = "nvrtc " + Compiler::NvrtcVersion();
  origin.driver = driver_;
  origin.device = device_;
  SealRecord seal = BuildSealRecord(origin, confirmation, verdict);
  // The seal and its binaries in one transaction: a seal is never kept without the cubins it names.
  if (services_.store &&
      !services_.store->Transaction(
          [&](std::string* e) { return services_.store->AddSeal(seal, e) && KeepSealedCubins(seal, e); }, err))
    return false;
  summary_->seal_id = seal.id;
  summary_->seal_reason = "sealed: " + verdict.reason;
  summary_->sealed_candidate_hash = primary.hash;
  summary_->sealed_kernel = KernelText(primary);
  summary_->sealed_mechanisms = origin.mechanisms;
  return true;
}

std::vector<std::string> RunState::ConfigNames() const {
  std::vector<std::string> names;
  for (const ConfigSpec& c : op_.configs)
    if (opts_.configs.empty() || std::find(opts_.configs.begin(), opts_.configs.end(), c.name) != opts_.configs.end())
      names.push_back(c.name);
  return names;
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

std::vector<DispatchCandidate> RunState::DispatchCandidates() const {
  std::vector<DispatchCandidate> out;
  for (const Best& m : measured_) out.push_back({"attempt " + std::to_string(m.iteration + 1), m.result});
  if (ExpertCandidate() >= 0) out.push_back({"expert reference", expert_vs_incumbent_});
  return out;
}

RunState::Best RunState::IncumbentAsBest() const {
  Best b;
  b.hash = incumbent_.candidate_hash;
  b.cubin_sha256 = incumbent_.cubin_sha256;
  b.kernel = incumbent_.kernel;
  if (incumbent_.has_source) b.proposal.candidate = incumbent_.source;
  nlohmann::json params = ParseJsonLenient(incumbent_.params_json);
  if (params.is_object())
    for (auto it = params.begin(); it != params.end(); ++it)
      if (it->is_number_integer()) b.proposal.params[it.key()] = it->get<int64_t>();
  b.iteration = -1;  // not an attempt of this run
  return b;
}

int RunState::ExpertCandidate() const {
  if (incumbent_.seal_id.empty() || !OutcomeTimed(expert_vs_incumbent_.outcome)) return -2;
  return static_cast<int>(measured_.size());
}

const KernelUnderTest* RunState::DispatchKernelFor(int candidate, const std::string& config) const {
  if (candidate < 0) return &incumbent_.For(config);
  if (candidate == ExpertCandidate()) return &expert_.kernel;
  return &measured_[candidate].kernel;
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

std::string RunState::KernelText(int candidate) const {
  if (candidate < 0) return "incumbent (" + incumbent_.label + ")";
  if (candidate == ExpertCandidate()) return "expert reference (" + expert_.label + ")";
  return KernelText(measured_[candidate]);
}

std::string RunState::KernelText(const Best& m) const {
  if (m.iteration < 0) return "incumbent (" + incumbent_.label + ")";  // IncumbentAsBest
  std::string params;
  for (const auto& [k, v] : m.proposal.params) params += (params.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return "attempt " + std::to_string(m.iteration + 1) + " (" +
         (m.proposal.family.empty() ? std::string("free-form") : m.proposal.family) + " " + params + ")";
}

bool RunState::KeepSealedCubins(const SealRecord& seal, std::string* err) {
  // Every binary this run measured, by the SHA-256 of its bytes.
  std::map<std::string, const std::string*> cubins;
  for (const Best& m : measured_)
    if (m.kernel.library.empty() && !m.kernel.cubin.empty()) cubins.emplace(m.cubin_sha256, &m.kernel.cubin);
  auto offer = [&](const KernelUnderTest& k) {
    if (k.library.empty() && !k.cubin.empty()) cubins.emplace(Sha256Hex(k.cubin), &k.cubin);
  };
  offer(incumbent_.kernel);
  for (const auto& [config, k] : incumbent_.per_config) offer(k.kernel);
  if (incumbent_.fallback) offer(incumbent_.fallback->kernel);
  // Every binary the seal names: its own and those of its dispatch table.
  std::set<std::string> named = {seal.cubin_sha256};
  nlohmann::json metadata = ParseJsonLenient(seal.metadata_json);
  if (metadata.is_object() && metadata.contains("dispatch") && metadata["dispatch"].contains("kernels"))
    for (const nlohmann::json& k : metadata["dispatch"]["kernels"])
      if (k.is_object() && k.contains("cubin_sha256") && k["cubin_sha256"].is_string())
        named.insert(k["cubin_sha256"].get<std::string>());
  const std::string toolchain = "nvrtc " + Compiler::NvrtcVersion();
  for (const std::string& sha : named) {
    if (sha.empty()) continue;
    auto it = cubins.find(sha);
    if (it == cubins.end()) {
      // An incumbent's kernel rebuilt by another toolchain than the one that sealed it: what was
      // measured is not the binary the table names, and the store keeps none of it to copy.
      spdlog::warn("seal {}: no cubin {} among this run's kernels; export will rebuild it", seal.id.substr(0, 12),
                   sha.substr(0, 12));
      continue;
    }
    if (!services_.store->PutCubin(sha, *it->second, toolchain, false, err)) return false;
  }
  return true;
}

nlohmann::json RunState::DispatchMetadata(const Dispatch& d, bool fallback_reference,
                                          std::map<std::string, int>* kernel_of_config) const {
  nlohmann::json kernels = nlohmann::json::array();
  std::map<std::string, int> index;  // "candidate\nparams" or "reference" -> entry
  auto entry = [&](const std::string& key, nlohmann::json value) {
    auto [it, fresh] = index.emplace(key, static_cast<int>(kernels.size()));
    if (fresh) kernels.push_back(std::move(value));
    return it->second;
  };
  auto reference = [&] {
    return entry("reference", {{"reference", expert_.label}});
  };
  auto candidate = [&](const std::string& hash, const std::string& params_json, const std::string& sha,
                       const std::string& family, const std::string& label) {
    nlohmann::json params = ParseJsonLenient(params_json);
    return entry(hash + "\n" + params_json, {{"candidate", hash},
                                             {"params", params.is_object() ? params : nlohmann::json::object()},
                                             {"cubin_sha256", sha},
                                             {"family", family},
                                             {"label", label}});
  };
  // The kernel the incumbent runs on `config` ("": its fallback, for shapes outside its table).
  auto incumbent_entry = [&](const std::string& config) {
    if (incumbent_.seal_id.empty() || incumbent_.reference_configs.count(config)) return reference();
    if (config.empty() && incumbent_.fallback_reference) return reference();
    if (config.empty() && incumbent_.fallback) {
      const DispatchKernel& f = *incumbent_.fallback;
      return candidate(f.candidate_hash, f.params_json, f.cubin_sha256, f.family, "from " + incumbent_.label);
    }
    auto it = incumbent_.per_config.find(config);
    if (it != incumbent_.per_config.end())
      return candidate(it->second.candidate_hash, it->second.params_json, it->second.cubin_sha256, it->second.family,
                       "from " + incumbent_.label);
    return candidate(incumbent_.candidate_hash, incumbent_.params_json, incumbent_.cubin_sha256, "",
                     "from " + incumbent_.label);
  };
  auto measured_entry = [&](int i) {
    if (i == ExpertCandidate()) return reference();
    const Best& m = measured_[i];
    return candidate(m.hash, ParamsJson(m.proposal.params), m.cubin_sha256, m.proposal.family, KernelText(i));
  };
  nlohmann::json table = nlohmann::json::array();
  for (const DispatchChoice& c : d.configs) {
    int k = c.candidate >= 0 ? measured_entry(c.candidate) : incumbent_entry(c.config);
    (*kernel_of_config)[c.config] = k;
    table.push_back({{"config", c.config}, {"kernel", k}, {"why", c.reason}});
  }
  int fallback = fallback_reference ? reference() : d.fallback >= 0 ? measured_entry(d.fallback) : incumbent_entry("");
  return {{"kernels", kernels}, {"table", table}, {"fallback", fallback}, {"fallback_why", d.fallback_reason}};
}

bool RunState::SealDispatch(std::string* err) {
  Dispatch d = AssembleDispatch(ConfigNames(), DispatchCandidates(), opts_.min_gain);
  std::string words;
  summary_->dispatch.clear();
  // Each row with the mechanisms of the kernel that serves it: the incumbent's own (none for a
  // library reference) where it keeps a config.
  auto mechanisms_of = [&](int candidate, const std::string& config) {
    return DispatchKernelFor(candidate, config)->manifest.mechanisms;
  };
  for (const DispatchChoice& c : d.configs) {
    words += (words.empty() ? "" : "; ") + c.config + ": " + c.reason;
    summary_->dispatch.push_back({c.config, KernelText(c.candidate), c.reason, mechanisms_of(c.candidate, c.config)});
  }
  summary_->dispatch.push_back(
      {"(other shapes)", KernelText(d.fallback), d.fallback_reason, mechanisms_of(d.fallback, "")});
  std::string& reason = summary_->seal_reason;
  reason += (reason.empty() ? "" : "; ") + std::string("per config: ") + words;
  if (!d.AnyCandidate()) {
    summary_->dispatch.clear();  // the incumbent serves every config: there is no dispatch
    return true;
  }
  // One candidate on every config is a single winner, confirmed as such; no sealing, no dispatch.
  if (!d.Mixed() || !opts_.allow_seal || !opts_.configs.empty()) return true;
  // The assembled dispatch is confirmed on fresh seeds, each config with the kernel serving it,
  // interleaved against the incumbent, and judged by the one sealing rule.
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  EvalResult confirmation = ConfirmDispatch(d, [&](int kernel, const std::vector<std::string>& configs) {
    EvalRequest part = req;
    part.configs = configs;
    return EvaluateByConfig(
        services_.evaluator, part,
        [&](const std::string& c) { return DispatchKernelFor(kernel, c); },
        [&](const std::string& c) { return &incumbent_.For(c); });
  });
  SealVerdict verdict = DecideSeal(confirmation, op_.configs.size(), opts_.min_gain);
  if (!verdict.seal) {
    if (Timed(confirmation.outcome)) FillConfigComparisons(confirmation);
    reason += "; the dispatch did not hold on confirmation: " + verdict.reason;
    return true;
  }
  bool fallback_reference = false;
  std::string why;
  if (!CheckServedKernels(&d, &fallback_reference, &why)) {
    reason += "; the dispatch is not sealed: " + why;
    return true;
  }
  const int measured = static_cast<int>(measured_.size());
  // The seal's own kernel (what a reader that knows no dispatch runs): the fallback when it is a
  // candidate of this run, else this run's candidate serving the most configs, else (the expert
  // and the sealed incumbent share the table) the incumbent's own kernel.
  std::optional<Best> incumbent_kernel;  // built only when no candidate of this run serves
  const Best* primary = d.fallback >= 0 && d.fallback < measured ? &measured_[d.fallback] : nullptr;
  if (!primary) {
    std::map<int, int> served;
    for (const DispatchChoice& c : d.configs)
      if (c.candidate >= 0 && c.candidate < measured) ++served[c.candidate];
    if (!served.empty())
      primary = &measured_[std::max_element(served.begin(), served.end(), [](const auto& a, const auto& b) {
                             return a.second < b.second;
                           })->first];
  }
  if (!primary) primary = &incumbent_kernel.emplace(IncumbentAsBest());
  std::map<std::string, int> kernel_of_config;
  nlohmann::json dispatch = DispatchMetadata(d, fallback_reference, &kernel_of_config);
  std::vector<std::string> mechanisms;
  for (int k : d.Kernels())
    for (const std::string& m : DispatchKernelFor(k, "")->manifest.mechanisms)
      if (std::find(mechanisms.begin(), mechanisms.end(), m) == mechanisms.end()) mechanisms.push_back(m);
  nlohmann::json metadata = {{"family", primary->proposal.family},
                             {"mechanisms", mechanisms},
                             {"rationale", "dispatch: per config, the fastest kernel the run measured there"},
                             {"dispatch", dispatch}};
  if (!WriteSeal(*primary, confirmation, verdict, std::move(metadata), kernel_of_config, err)) return false;
  reason = "sealed a dispatch of " + std::to_string(DistinctServingKernels(d)) + " kernels: " + verdict.reason;
  int expert_configs = 0;
  for (const DispatchChoice& c : d.configs) expert_configs += c.candidate == ExpertCandidate();
  if (expert_configs > 0)
    reason += "; the expert reference serves " + std::to_string(expert_configs) + " config" +
              (expert_configs > 1 ? "s" : "") + ", where it measured faster than " + incumbent_.label;
  return true;
}

bool RunState::CheckServedKernels(Dispatch* d, bool* fallback_reference, std::string* why) {
  // The fallback serves shapes outside the table: it is measured on every config against the
  // expert reference and checked on shapes outside the suite, and the expert reference takes its
  // place where either fails.
  const int measured = static_cast<int>(measured_.size());
  const KernelUnderTest* fallback_kernel = nullptr;  // null: the expert reference
  std::string fallback_label;
  if (d->fallback >= 0 && d->fallback < measured) {
    fallback_kernel = &measured_[d->fallback].kernel;
    fallback_label = KernelText(d->fallback);
  } else if (d->fallback < 0 && !incumbent_.seal_id.empty()) {
    fallback_kernel = incumbent_.FallbackKernel();
    fallback_label = "the fallback of " + incumbent_.label;
  }
  std::string failed;
  if (fallback_kernel && (!FallbackHolds(*fallback_kernel, &failed) ||
                          !CheckOutsideSuite({{fallback_label + " (the fallback)", fallback_kernel}}, &failed))) {
    d->fallback_reason = fallback_label + " " + failed + ": the expert reference serves shapes outside the table";
    fallback_kernel = nullptr;
    if (d->fallback >= 0) d->fallback = -1;
    summary_->dispatch.back() = {"(other shapes)", "expert reference (" + expert_.label + ")", d->fallback_reason, {}};
  }
  *fallback_reference = fallback_kernel == nullptr;
  // Each other kernel serving a config is checked on shapes outside the suite as well (a seal's
  // kernels are exported for use beyond it): one wrong there stops the dispatch.
  std::vector<std::pair<std::string, const KernelUnderTest*>> table_kernels;
  std::set<std::string> listed;  // by cubin: a kernel serving several configs is checked once
  if (fallback_kernel) listed.insert(fallback_kernel->cubin);
  for (const DispatchChoice& c : d->configs) {
    const KernelUnderTest* k = DispatchKernelFor(c.candidate, c.config);
    if (k->library.empty() && listed.insert(k->cubin).second)
      table_kernels.push_back({c.candidate < 0 ? "the kernel of " + c.config + " from " + incumbent_.label
                                               : KernelText(c.candidate),
                               k});
  }
  return CheckOutsideSuite(table_kernels, why);
}

int RunState::DistinctServingKernels(const Dispatch& d) const {
  std::set<std::string> serving;  // a library call counted once
  for (const DispatchChoice& c : d.configs) {
    const KernelUnderTest* k = DispatchKernelFor(c.candidate, c.config);
    serving.insert(k->library.empty() ? k->cubin : "library " + k->library);
  }
  return static_cast<int>(serving.size());
}

bool RunState::DispatchBeatsBestWinner() const {
  if (winners_.empty()) return true;
  Dispatch d = AssembleDispatch(ConfigNames(), DispatchCandidates(), opts_.min_gain);
  if (!d.Mixed()) return false;
  // The dispatch's search geomean: per config its kernel's speedup, 1 where the incumbent stays.
  std::vector<double> speedups;
  for (const DispatchChoice& c : d.configs) speedups.push_back(c.candidate >= 0 ? c.best.speedup : 1.0);
  return Geomean(speedups) > winners_.front().result.geomean_speedup * (1 + opts_.min_gain);
}

bool RunState::FallbackHolds(const KernelUnderTest& kernel, std::string* why) {
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.candidate = kernel;
  req.incumbent = expert_.kernel;
  req.configs = ConfigNames();
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  EvalResult r = services_.evaluator->Evaluate(req);
  if (!Timed(r.outcome)) {
    *why = std::string("failed on the suite against the expert reference (") + OutcomeName(r.outcome) +
           (r.detail.empty() ? "" : ": " + r.detail) + ")";
    return false;
  }
  for (const ConfigResult& c : r.configs) {
    TimeComparison t = CompareConfig(c, opts_.min_gain);
    if (t.timed && t.direction == Direction::slower) {
      *why = "is slower than the expert reference on " + c.config + " (" + Fmt3(t.speedup) + "x, " +
             DirectionWords(t.direction) + ")";
      return false;
    }
  }
  return true;
}

bool RunState::CheckOutsideSuite(const std::vector<std::pair<std::string, const KernelUnderTest*>>& kernels,
                                 std::string* why) {
  if (op_.ranges.empty()) {
    const std::string none = "shapes outside the suite: none checked (operator.json declares no \"ranges\")";
    if (std::find(summary_->outside_shapes.begin(), summary_->outside_shapes.end(), none) ==
        summary_->outside_shapes.end())
      summary_->outside_shapes.push_back(none);
    return true;
  }
  const uint64_t seed = std::hash<std::string>{}(run_id_);
  for (const auto& [label, kernel] : kernels) {
    if (!kernel->library.empty()) continue;  // a library call takes every shape the operator allows
    OutsideCheck c = CheckOutsideShapes(*services_.evaluator, op_, golden_, label, *kernel, 3, seed, opts_.deadline_s);
    summary_->outside_shapes.push_back(OutsideCheckText(c));
    if (!c.ok) {
      *why = OutsideCheckText(c);
      return false;
    }
  }
  return true;
}

bool RunState::SealingAllowed() {
  if (!opts_.allow_seal) {
    summary_->seal_reason = "sealing disabled (--no-seal)";
    return false;
  }
  if (!opts_.configs.empty()) {
    summary_->seal_reason = "run limited to some configs (--config); a seal must serve every config";
    return false;
  }
  return true;
}

std::string RunState::ProfileCandidate(Evaluator* evaluator, const KernelUnderTest& kernel, const std::string& hash) {
  if (!evaluator || opts_.compile_only || !services_.agent->WantsProfiles()) return "";
  ProfileRequest req;
  req.op = &op_;
  req.kernel = kernel;
  req.configs = opts_.configs;
  std::vector<KernelProfile> profiles;
  std::string err;
  if (!evaluator->Profile(req, &profiles, &err)) {
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

void RunState::FillSpendAndLineage() {
  summary_->agent_note = services_.agent->Note();
  summary_->spend = services_.agent->Spent();
  summary_->cost_per_attempt = summary_->attempts ? summary_->spend.cost_usd / summary_->attempts : 0;
  summary_->cost_per_improvement = summary_->improvements ? summary_->spend.cost_usd / summary_->improvements : 0;
  summary_->lineage.clear();
  if (!have_best_) return;
  // From the best back through its parents (within this run), then oldest first.
  std::set<int> visited;
  int at = best_.iteration;
  while (at >= 0 && at < static_cast<int>(history_.size()) && visited.insert(at).second) {
    const AttemptSummary& a = history_[at];
    LineageStep step;
    step.iteration = at;
    auto parent = a.parent.empty() ? iteration_of_.end() : iteration_of_.find(a.parent);
    step.parent_iteration = parent == iteration_of_.end() ? -1 : parent->second;
    step.change = a.change;
    step.outcome = OutcomeName(a.outcome);
    step.speedup = a.geomean_speedup;
    if (step.parent_iteration >= 0) step.parent_speedup = history_[step.parent_iteration].geomean_speedup;
    step.cost_usd = a.cost_usd;
    summary_->lineage.push_back(std::move(step));
    at = summary_->lineage.back().parent_iteration;
  }
  std::reverse(summary_->lineage.begin(), summary_->lineage.end());
}

void RunState::FillBest() {
  if (!have_best_) return;
  summary_->best_speedup = best_.result.geomean_speedup;
  summary_->best_iteration = best_.iteration;
  summary_->best_candidate_hash = best_.hash;
  summary_->best_family = best_.proposal.family;
  summary_->best_params = best_.proposal.params;
  FillConfigComparisons(best_.result);
}

bool RunState::CloseRun(const std::string& status, std::string* err) {
  summary_->status = status;
  if (!services_.store || run_id_.empty()) return true;
  nlohmann::json j = {{"stop_reason", summary_->stop_reason}, {"attempts", summary_->attempts},
                      {"best_speedup", summary_->best_speedup}, {"seal", summary_->seal_id},
                      {"seal_reason", summary_->seal_reason},   {"wall_s", summary_->wall_s}};
  if (!summary_->error.empty()) j["error"] = summary_->error;
  if (!summary_->agent_note.empty()) j["agent_note"] = summary_->agent_note;
  if (summary_->spend.requests > 0) {
    nlohmann::json per_attempt = nlohmann::json::array();
    for (const AttemptSummary& a : history_)
      per_attempt.push_back({{"iteration", a.iteration}, {"tokens", a.tokens}, {"cost_usd", a.cost_usd}});
    j["llm"] = {{"requests", summary_->spend.requests},
                {"input_tokens", summary_->spend.input_tokens},
                {"output_tokens", summary_->spend.output_tokens},
                {"cost_usd", summary_->spend.cost_usd},
                {"cost_per_attempt", summary_->cost_per_attempt},
                {"improvements", summary_->improvements},
                {"cost_per_improvement", summary_->cost_per_improvement},
                {"attempts", per_attempt}};
  }
  return services_.store->FinishRun(run_id_, status, j.dump(), err);
}

bool RunState::Finish(std::string* err) {
  if (summary_->stop_reason.empty()) summary_->stop_reason = "iterations";
  FillSpendAndLineage();
  FillBest();
  if (services_.store && services_.evaluator && !opts_.compile_only && have_best_ &&
      summary_->stop_reason != "interrupted") {
    std::map<std::string, double> best_metrics;
    auto stage_start = std::chrono::steady_clock::now();
    AnalyzeBest(&best_metrics);
    AddStage("analysis of the best", SecondsSince(stage_start));
    stage_start = std::chrono::steady_clock::now();
    std::string ablation_note;
    RunAblations(best_metrics, &ablation_note);
    AddStage("ablations", SecondsSince(stage_start), ablation_note);
  }
  SummarizeLearned();
  const auto seal_start = std::chrono::steady_clock::now();
  if (opts_.compile_only) {
    summary_->seal_reason = "compile-only run: nothing evaluated, nothing sealed";
  } else if (!have_best_) {
    summary_->seal_reason = measured_.empty() ? "not sealed: no candidate was correct and timed"
                                              : "not sealed: no candidate serving every config was correct and timed";
    // Candidates that serve some configs, and the expert reference timed against a sealed
    // incumbent, may still take configs in a dispatch.
    if ((ExpertCandidate() >= 0 || !measured_.empty()) && !SealDispatch(err)) return false;
  } else if (winners_.empty()) {
    summary_->seal_reason = "not sealed: no candidate beat the incumbent on every config (best geomean " +
                            Fmt3(best_.result.geomean_speedup) + "x)";
    if (!SealDispatch(err)) return false;
  } else if (DispatchBeatsBestWinner()) {
    // Kernels that each own some configs beat the best single kernel: the dispatch is confirmed
    // first, the winners alone when it does not hold.
    if (!SealDispatch(err)) return false;
    if (summary_->seal_id.empty()) {
      const std::string dispatch_reason = summary_->seal_reason;
      if (!SealBest(err)) return false;
      if (!summary_->seal_id.empty()) summary_->dispatch.clear();
      summary_->seal_reason += "; before that, " + dispatch_reason;
    }
  } else {
    if (!SealBest(err)) return false;
    if (summary_->seal_id.empty() && !SealDispatch(err)) return false;
  }
  if (!opts_.compile_only && have_best_) AddStage("confirmation and seal", SecondsSince(seal_start));
  summary_->wall_s = SecondsRun();
  summary_->candidates_per_minute = summary_->wall_s > 0 ? summary_->attempts / (summary_->wall_s / 60.0) : 0;
  // A run that failed keeps what it found (a seal included) and is recorded failed with its reason.
  std::string failure = EndFailure(opts_, *summary_);
  if (!failure.empty()) {
    spdlog::error("run failed: {}", failure);
    summary_->error = failure;
    return CloseRun("failed", err);
  }
  return CloseRun(summary_->stop_reason == "interrupted" ? "interrupted" : "finished", err);
}

bool RunState::Fail(const std::string& reason, std::string* err) {
  summary_->stop_reason = "error";
  summary_->error = reason;
  FillBest();
  FillSpendAndLineage();
  if (summary_->seal_id.empty()) summary_->seal_reason = "not sealed: the run failed";
  if (CloseRun("failed", err)) return true;
  summary_->status = "running";
  *err = "run " + run_id_ + " could not be recorded as failed (" + *err + "); it stays 'running' in " +
         services_.store->path() + " and continues with --resume " + run_id_;
  return false;
}

}  // namespace forgek
