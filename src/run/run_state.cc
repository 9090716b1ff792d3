// One run's steps: begin (incumbent, analysis, records), attempts (evaluate, record, learn), finish (seal).
#include "run/run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/hash.h"
#include "forgek/params.h"
#include "forgek/seal.h"
#include "forgek/store.h"
#include "forgek/verdict.h"
#include "run/ablation.h"

namespace forgek {
namespace {

bool Timed(Outcome o) { return OutcomeTimed(o); }

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

}  // namespace

RunState::RunState(const OperatorSpec& op, const RunOptions& opts, RunServices& services, RunSummary* summary)
    : op_(op), opts_(opts), services_(services), summary_(summary) {}

bool RunState::Begin(std::string* err) {
  *summary_ = RunSummary{};
  summary_->operator_name = op_.name;
  summary_->arch = opts_.arch;
  summary_->agent = services_.agent->Name();
  std::vector<DegradedStage> skipped;
  families_ = LoadFamilies(op_, opts_.arch, &skipped);
  for (const DegradedStage& d : skipped) Degrade(d.stage, d.reason);
  if (families_.empty() && !op_.seed.empty()) {
    // An operator without families still gets a search of one: its seed (fixed params), so a run
    // measures and analyses it against the incumbent and can seal it when it wins.
    Candidate seed;
    Diagnostics diags;
    std::string path = (std::filesystem::path(op_.dir) / op_.seed).string();
    bool loaded = LoadCandidateFile(path, &seed, &diags);
    if (loaded && !seed.manifest.ForArch(opts_.arch)) {
      spdlog::info("seed {} skipped: it is for {}, not {}", op_.seed, seed.manifest.ArchsText(), opts_.arch);
    } else if (loaded) {
      spdlog::info("{} declares no families: the seed {} is the only candidate", op_.name, op_.seed);
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
  if (incumbent_.seal_id.empty()) {
    expert_ = incumbent_;
  } else if (!PrepareExpertReference(op_, opts_.arch, *services_.compiler, &expert_, err)) {
    return false;
  }
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
    req.candidate = incumbent_.kernel;
    req.incumbent = expert_.kernel;
    req.golden = golden_;
    req.configs = opts_.configs;
    req.seeds = opts_.seeds;
    req.deadline_s = opts_.deadline_s;
    EvalResult r = services_.evaluator->Evaluate(req);
    if (!Timed(r.outcome)) {
      Degrade("incumbent", incumbent_.label + " no longer passes (" + OutcomeName(r.outcome) + ": " + r.detail +
                               "); the expert reference is the incumbent");
      incumbent_ = expert_;
    } else {
      for (const ConfigResult& c : r.configs) expert_us_[c.config] = c.incumbent.median_us;
      spdlog::info("incumbent {}: {}x the expert reference (geomean)", incumbent_.label, Fmt3(r.geomean_speedup));
    }
  }
  summary_->incumbent = incumbent_.label;

  // Analyse the incumbent: what the hardware shows about it becomes observations and hypotheses.
  if (services_.evaluator && !opts_.compile_only) {
    ProfileRequest preq;
    preq.op = &op_;
    preq.kernel = incumbent_.kernel;
    preq.configs = opts_.configs;
    std::string perr;
    const bool profiled = services_.evaluator->Profile(preq, &incumbent_profiles_, &perr);
    if (profiled) AttachSass(incumbent_.kernel, &incumbent_profiles_);
    if (!profiled) {
      Degrade("profile", "incumbent not profiled: " + perr);
    } else if (services_.store) {
      std::vector<Observation> all;
      for (KernelProfile& prof : incumbent_profiles_) {
        prof.label = incumbent_.seal_id.empty() ? "reference" : "seal:" + incumbent_.seal_id;
        std::vector<Observation> obs;
        std::string aerr;
        bool ok = have_kb_ ? AnalyzeAndRecord(*services_.store, kb_, op_, opts_.arch, device_, prof, &obs, &aerr)
                           : AnalyzeAndRecord(*services_.store, op_, opts_.arch, prof, &obs, &aerr);
        if (!ok) Degrade("analysis", "analysis of the incumbent on " + prof.config + " failed: " + aerr);
        all.insert(all.end(), obs.begin(), obs.end());
      }
      incumbent_summary_ = RenderObservations(all);
      spdlog::info("incumbent analysed: {} observations", all.size());
    }
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
      std::vector<AttemptRecord> attempts;
      if (!services_.store->ListAttempts(run.id, &attempts, err)) return false;
      for (const AttemptRecord& rec : attempts) {
        CandidateRecord cand;
        bool have = false;
        if (!services_.store->GetCandidate(rec.candidate_hash, &cand, &have, err)) return false;
        AttemptSummary a;
        a.iteration = rec.iteration;
        a.candidate_hash = rec.candidate_hash;
        a.outcome = rec.outcome;
        a.feedback = rec.detail;
        a.geomean_speedup = rec.geomean_speedup;
        if (have) {
          a.family = cand.family;
          std::string perr;
          if (!ParseParamsJson(cand.params_json, &a.params, &perr)) Degrade("resume", "attempt " + rec.id + ": " + perr);
        }
        history_.push_back(std::move(a));
      }
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
  if (services_.run_started && !run_id_.empty()) services_.run_started(run_id_);
  return true;
}

std::string RunState::BudgetSpent(double elapsed_s) const {
  if (services_.stop_requested && services_.stop_requested()) return "interrupted";
  if (opts_.iterations > 0 && attempts_this_run_ >= opts_.iterations) return "iterations";
  if (opts_.time_s > 0 && elapsed_s >= opts_.time_s) return "time";
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
  cand.source = p.candidate.source;
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

void RunState::RunAblations(const std::map<std::string, double>& best_metrics) {
  const Candidate& family = best_.proposal.candidate;
  if (family.manifest.controls.empty() || best_.proposal.family.empty()) return;
  const int budget = opts_.ablations >= 0 ? opts_.ablations : std::clamp(opts_.iterations / 8, 1, 4);
  int run = 0, recorded = 0;
  for (const ParamAssignment& variant : AblationVariants(family, op_, best_.proposal.params, budget)) {
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
  Evaluated e{p, compiled, EvalResult{}, false};
  if (!compiled.ok || opts_.compile_only || !evaluator) return e;
  EvalRequest req;
  req.op = &op_;
  req.candidate.label = "candidate";
  req.candidate.cubin = compiled.cubin;
  req.candidate.manifest = p.candidate.manifest;
  req.candidate.params = p.params;
  req.incumbent = incumbent_.kernel;
  req.golden = golden_;
  req.configs = opts_.configs;
  req.seeds = opts_.seeds;
  req.deadline_s = opts_.deadline_s;
  e.result = evaluator->Evaluate(req);
  e.evaluated = true;
  return e;
}

bool RunState::Attempt(const Proposal& p, const CompileResult& compiled, std::string* err) {
  return Commit(EvaluateProposal(p, compiled, services_.evaluator), err);
}

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
  if (!compiled.ok) {
    a.outcome = Outcome::compile_error;
    a.feedback = compiled.timed_out ? "compile timed out: " + compiled.Summary() : compiled.Summary();
    ShowCompileFailure(a, compiled);
  } else if (!evaluated) {
    // Not evaluated (--compile-only): compiled, never timed, no evidence about speed.
    a.outcome = Outcome::compiled;
    a.feedback = "compiled, not evaluated (--compile-only): " + compiled.Summary();
  } else {
    a.outcome = result.outcome;
    a.feedback = result.detail;
    a.geomean_speedup = Timed(result.outcome) ? result.geomean_speedup : 0;
    const bool new_best = Timed(result.outcome) && result.geomean_speedup > (have_best_ ? best_.result.geomean_speedup : 0);
    if (new_best || result.outcome == Outcome::faster) {
      KernelUnderTest kernel;
      kernel.label = "attempt " + std::to_string(a.iteration);
      kernel.cubin = compiled.cubin;
      kernel.manifest = p.candidate.manifest;
      kernel.params = p.params;
      Best candidate{p, std::move(kernel), result, a.candidate_hash, Sha256Hex(compiled.cubin), a.iteration};
      if (new_best) {
        have_best_ = true;
        best_ = candidate;
      }
      if (result.outcome == Outcome::faster) KeepWinner(std::move(candidate));
    }
  }
  std::string attempt_id;
  if (!RecordAttempt(p, a.candidate_hash, evaluated ? &result : nullptr, &a, &attempt_id, err)) return false;
  if (evaluated) Learn(p, a.candidate_hash, attempt_id, result);

  double best = have_best_ ? best_.result.geomean_speedup : 0;
  since_best_ = (have_best_ && best_.iteration == a.iteration) ? 0 : since_best_ + 1;
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
    if (Timed(a.outcome)) line += " " + Fmt3(a.geomean_speedup) + "x";
    line += " | best " + Fmt3(have_best_ ? best_.result.geomean_speedup : 0) + "x vs incumbent";
  }
  line += " |" + counts;
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
    cc.incumbent_sol_pct = cc.incumbent_us > 0 && c.sol_us > 0 ? 100.0 * c.sol_us / cc.incumbent_us : 0;
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
  if (!opts_.allow_seal) {
    summary_->seal_reason = "sealing disabled (--no-seal)";
    return true;
  }
  if (!opts_.configs.empty()) {
    summary_->seal_reason = "run limited to some configs (--config); a seal must serve every config";
    return true;
  }
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
  req.candidate = winner.kernel;
  req.incumbent = incumbent_.kernel;
  req.golden = golden_;
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  *confirmation_out = services_.evaluator->Evaluate(req);
  const EvalResult& confirmation = *confirmation_out;
  SealVerdict verdict = DecideSeal(confirmation, op_.configs.size(), opts_.min_gain);
  if (!verdict.seal) {
    *why = verdict.reason;
    return true;
  }
  FillConfigComparisons(confirmation);
  SealOrigin origin;
  origin.operator_name = op_.name;
  origin.arch = opts_.arch;
  origin.candidate_hash = winner.hash;
  origin.cubin_sha256 = winner.cubin_sha256;
  origin.params = winner.proposal.params;
  origin.family = winner.proposal.family;
  origin.rationale = winner.proposal.rationale;
  origin.mechanisms = winner.proposal.candidate.manifest.mechanisms;
  origin.parent = incumbent_.seal_id;
  origin.incumbent_label = incumbent_.label;
  origin.run_id = run_id_;
  origin.toolchain = "nvrtc " + Compiler::NvrtcVersion();
  origin.driver = driver_;
  origin.device = device_;
  SealRecord seal = BuildSealRecord(origin, confirmation, verdict);
  if (services_.store && !services_.store->AddSeal(seal, err)) return false;
  summary_->seal_id = seal.id;
  summary_->seal_reason = "sealed: " + verdict.reason;
  summary_->sealed_candidate_hash = winner.hash;
  *sealed = true;
  return true;
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
  return services_.store->FinishRun(run_id_, status, j.dump(), err);
}

bool RunState::Finish(std::string* err) {
  if (summary_->stop_reason.empty()) summary_->stop_reason = "iterations";
  FillBest();
  if (services_.store && services_.evaluator && !opts_.compile_only && have_best_ &&
      summary_->stop_reason != "interrupted") {
    std::map<std::string, double> best_metrics;
    AnalyzeBest(&best_metrics);
    RunAblations(best_metrics);
  }
  SummarizeLearned();
  if (opts_.compile_only) {
    summary_->seal_reason = "compile-only run: nothing evaluated, nothing sealed";
  } else if (!have_best_) {
    summary_->seal_reason = "not sealed: no candidate was correct and timed";
  } else if (winners_.empty()) {
    summary_->seal_reason = "not sealed: no candidate beat the incumbent (best " + Fmt3(best_.result.geomean_speedup) + "x)";
  } else if (!SealBest(err)) {
    return false;
  }
  return CloseRun(summary_->stop_reason == "interrupted" ? "interrupted" : "finished", err);
}

bool RunState::Fail(const std::string& reason, std::string* err) {
  summary_->stop_reason = "error";
  summary_->error = reason;
  FillBest();
  if (summary_->seal_id.empty()) summary_->seal_reason = "not sealed: the run failed";
  if (CloseRun("failed", err)) return true;
  summary_->status = "running";
  *err = "run " + run_id_ + " could not be recorded as failed (" + *err + "); it stays 'running' in " +
         services_.store->path() + " and continues with --resume " + run_id_;
  return false;
}

}  // namespace forgek
