// The run's start: the incumbent and the expert reference, the analysis of the reference, the run's records.
#include "run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "incumbent_analysis.h"
#include "incumbent_view.h"
#include "resume_history.h"
#include "run_text.h"

namespace forgek {
namespace {

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

// The expert reference as a candidate against a sealed incumbent: `seal_vs_expert` (the seal
// timed against the expert, per config, interleaved in one worker) with its two sides swapped, so
// that the dispatch reads it as it reads any attempt (speedup = seal / expert). The verdict is the
// one rule's on these same numbers.
EvalResult ExpertAgainstSeal(const EvalResult& seal_vs_expert) {
  EvalResult r;
  r.wall_s = seal_vs_expert.wall_s;
  for (ConfigResult c : seal_vs_expert.configs) {
    std::swap(c.candidate, c.incumbent);
    // The rounds' ratios invert; their relative spread stays (to first order) what it was.
    if (c.paired.median > 0) c.paired.median = 1 / c.paired.median;
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

bool RunState::Begin(std::string* err) {
  const auto begin_start = std::chrono::steady_clock::now();
  *summary_ = RunSummary{};
  summary_->operator_name = op_.name;
  summary_->arch = opts_.arch;
  summary_->agent = services_.agent->Name();
  LoadSearchSpace();
  LoadKnowledge();
  CollectRegimes();
  if (!PrepareIncumbent(err)) return false;
  RecheckSealedIncumbent();
  summary_->incumbent = incumbent_.label;
  // A dispatch incumbent is shown to the agent config by config: each is timed against its own.
  if (!DescribeDispatchIncumbent(incumbent_, expert_, ConfigNames(), services_.store, &incumbent_dispatch_, err))
    return false;
  AnalyzeTheIncumbent();
  if (!OpenRunRecord(err)) return false;
  summary_->run_id = run_id_;
  LoadEarlierResults();
  for (size_t i = 0; i < history_.size(); ++i) iteration_of_.emplace(history_[i].candidate_hash, static_cast<int>(i));
  if (services_.run_started && !run_id_.empty()) services_.run_started(run_id_);
  double begin_s = SecondsSince(begin_start);
  for (const RunStage& stage : summary_->stages) begin_s -= stage.seconds;
  summary_->stages.insert(summary_->stages.begin(), RunStage{"start", std::max(begin_s, 0.0), ""});
  return true;
}

// The operator's families for this arch, else its seed; then the families a model wrote that won
// in earlier runs, searched like the operator's own.
void RunState::LoadSearchSpace() {
  std::vector<DegradedStage> skipped;
  families_ = LoadFamilies(op_, opts_.arch, &skipped);
  for (const DegradedStage& d : skipped) Degrade(d.stage, d.reason);
  if (families_.empty() && !op_.seed.empty()) {
    // An operator without families searches its seed: the seed's param domains when it declares
    // some, else the seed alone (measured and analysed against the incumbent, sealed when it wins).
    Candidate seed;
    Diagnostics diags;
    bool loaded = LoadSeed(op_, &seed, &diags);
    if (loaded && !seed.manifest.ForArch(opts_.arch)) {
      spdlog::info("seed {} skipped: it is for {}, not {}", op_.SeedText(), seed.manifest.ArchsText(), opts_.arch);
    } else if (loaded) {
      if (seed.manifest.IsFamily())
        spdlog::info("{} declares no families: its seed {} is the search space ({} params with domains)", op_.name,
                     op_.SeedText(), seed.manifest.params.size());
      else
        spdlog::info("{} declares no families and its seed {} fixes every param: the seed is the only candidate",
                     op_.name, op_.SeedText());
      families_.push_back(std::move(seed));
    } else {
      Degrade("seed", "seed " + op_.SeedText() + " skipped: " + FormatDiagnostics(diags));
    }
  }
  if (!services_.store) return;
  std::vector<Candidate> invented;
  std::string ferr;
  if (!LoadInventedFamilies(*services_.store, op_, opts_.arch, kInventedFamilies, &invented, &ferr)) {
    Degrade("families", "families a model wrote in earlier runs not loaded: " + ferr);
    return;
  }
  for (Candidate& f : invented) {
    spdlog::info("family {} (written by a model in an earlier run, won there) is searched too", f.path);
    families_.push_back(std::move(f));
  }
}

// The knowledge base of mechanisms (knowledge/), which the analysis and the agents read.
void RunState::LoadKnowledge() {
  Diagnostics kb_diags;
  std::string kb_dir = KnowledgeDir();
  have_kb_ = !kb_dir.empty() && LoadKnowledgeBase(kb_dir, &kb_, &kb_diags);
  if (!have_kb_)
    Degrade("knowledge", "knowledge base not loaded: " +
                             (kb_dir.empty() ? std::string("no knowledge/ folder") : FormatDiagnostics(kb_diags)));
}

// The shape regimes the run serves (those of the configs it measures).
void RunState::CollectRegimes() {
  for (const ConfigSpec& c : op_.configs) {
    if (!opts_.configs.empty() && std::find(opts_.configs.begin(), opts_.configs.end(), c.name) == opts_.configs.end())
      continue;
    std::string r = ShapeRegime(op_, c.name);
    if (std::find(regimes_.begin(), regimes_.end(), r) == regimes_.end()) regimes_.push_back(r);
  }
}

// The incumbent (the newest seal that loads, else the expert reference), the expert reference, the
// golden, and the device the evaluator runs on.
bool RunState::PrepareIncumbent(std::string* err) {
  if (!PickIncumbent(op_, opts_.arch, services_.store, *services_.compiler, &incumbent_, err)) return false;
  for (const std::string& note : incumbent_.skipped_seals) Degrade("incumbent", note);
  if (incumbent_.seal_id.empty()) {
    expert_ = incumbent_;
  } else if (!PrepareExpertReference(op_, opts_.arch, *services_.compiler, &expert_, err)) {
    return false;
  }
  ServeOutsideTable(op_, expert_.kernel, DeviceSmCountOr(services_.evaluator, opts_.arch), &incumbent_);
  if (services_.evaluator && !opts_.compile_only &&
      !PrepareGolden(op_, opts_.arch, *services_.compiler, &golden_, err))
    return false;
  if (services_.evaluator) {
    device_ = services_.evaluator->DeviceName();
    driver_ = services_.evaluator->DriverVersion();
  }
  summary_->device = device_;
  return true;
}

// A sealed incumbent is re-checked against the expert reference: it must still be right on this
// machine, and its times give the "vs expert" column; one that fails gives way to the expert.
void RunState::RecheckSealedIncumbent() {
  if (!services_.evaluator || incumbent_.seal_id.empty() || opts_.compile_only) return;
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.configs = opts_.configs;
  req.seeds = opts_.seeds;
  req.deadline_s = opts_.deadline_s;
  EvalResult r = EvaluateByConfig(
      services_.evaluator, req, [&](const std::string& c) { return &incumbent_.For(c); },
      [&](const std::string&) { return &expert_.kernel; });
  if (!OutcomeTimed(r.outcome)) {
    Degrade("incumbent", incumbent_.label + " no longer passes (" + OutcomeName(r.outcome) + ": " + r.detail +
                             "); the expert reference is the incumbent");
    incumbent_ = expert_;
    return;
  }
  for (const ConfigResult& c : r.configs) expert_us_[c.config] = c.incumbent.median_us;
  expert_vs_incumbent_ = ExpertAgainstSeal(r);
  spdlog::info("incumbent {}: {}x the expert reference (geomean)", incumbent_.label, Fmt3(r.geomean_speedup));
}

// Analyses the incumbent: what the hardware shows about it becomes observations and hypotheses.
void RunState::AnalyzeTheIncumbent() {
  if (!services_.evaluator || opts_.compile_only) return;
  const auto analysis_start = std::chrono::steady_clock::now();
  AnalysisInputs in{&op_, opts_.arch, device_, driver_, services_.evaluator, services_.store,
                    have_kb_ ? &kb_ : nullptr, ConfigNames()};
  IncumbentAnalysis analysis = AnalyzeIncumbent(in, incumbent_);
  for (const DegradedStage& d : analysis.degraded) Degrade(d.stage, d.reason);
  incumbent_profiles_ = std::move(analysis.profiles);
  incumbent_summary_ = std::move(analysis.summary);
  profile_s_per_config_ = std::max(profile_s_per_config_, analysis.profile_s_per_config);
  if (services_.store)
    spdlog::info("incumbent analysed: {} configs profiled, {} from the store", analysis.profiled, analysis.cached);
  AddStage("incumbent analysis", SecondsSince(analysis_start),
           analysis.cached > 0 ? std::to_string(analysis.cached) + " of " +
                                     std::to_string(analysis.cached + analysis.profiled) + " configs from the store"
                               : "");
}

// The run's record in the store: the run resumed with its history, or a new run.
bool RunState::OpenRunRecord(std::string* err) {
  if (!services_.store) return true;
  if (opts_.resume_run.empty()) {
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
    return true;
  }
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
  return true;
}

// The results of earlier runs of this operator, which the agents start from.
void RunState::LoadEarlierResults() {
  if (!services_.store) return;
  std::string perr;
  if (!LoadPriorResults(*services_.store, op_, opts_.arch, opts_.configs, run_id_, kPriorResults, &prior_results_,
                        &perr))
    Degrade("prior_results", "results of earlier runs not loaded: " + perr);
  else if (!prior_results_.empty())
    spdlog::info("{} results of earlier runs to start from; best: {} {}", prior_results_.size(),
                 prior_results_[0].family, prior_results_[0].source);
}

}  // namespace forgek
