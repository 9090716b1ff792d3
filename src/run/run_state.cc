// The run's shared steps: budget and time, the context an agent proposes from, progress lines.
#include "run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "forgek/verdict/verdict.h"
#include "run_text.h"

namespace forgek {
namespace {

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
  const double evaluation = EvaluationEstimate();
  const double profile = profile_s_per_config_ * static_cast<double>(ConfigNames().size());
  const bool ablations = opts_.ablations != 0 && !best_.proposal.candidate.manifest.controls.empty();
  // Confirmation on fresh seeds, the best's profile, and one ablation (evaluated, and profiled on
  // one config for its metric deltas).
  return evaluation + (have_kb_ ? profile : 0) + (ablations ? evaluation + (have_kb_ ? profile_s_per_config_ : 0) : 0);
}

double RunState::SecondsLeft() const {
  return opts_.time_s > 0 ? opts_.time_s - SecondsRun() : std::numeric_limits<double>::infinity();
}

double RunState::EvaluationEstimate() const { return evaluations_ ? evaluation_s_ / evaluations_ : 0; }

bool RunState::FitsBeforeConfirmation(double seconds) const {
  return opts_.time_s <= 0 || seconds + EvaluationEstimate() <= SecondsLeft();
}

StopReason RunState::BudgetSpent(double elapsed_s) const {
  if (services_.stop_requested && services_.stop_requested()) return StopReason::interrupted;
  if (opts_.iterations > 0 && attempts_this_run_ >= opts_.iterations) return StopReason::iterations;
  if (opts_.time_s > 0 && elapsed_s + EndWorkEstimate() >= opts_.time_s) return StopReason::time;
  if (opts_.patience > 0 && since_best_ >= opts_.patience) return StopReason::patience;
  return StopReason::none;
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

void RunState::Progress(const AttemptSummary& a) {
  if (!services_.progress) return;
  std::string counts;
  for (const auto& [name, n] : summary_->outcomes) counts += " " + name + "=" + std::to_string(n);
  std::string line = "attempt " + std::to_string(summary_->attempts) +
                     (opts_.iterations > 0 ? "/" + std::to_string(opts_.iterations) : "") + " | " + OutcomeName(a.outcome);
  // A compile-only run times nothing: no speedup, no best, only what compiled.
  if (!opts_.compile_only) {
    if (OutcomeTimed(a.outcome)) line += " " + Fmt3(a.geomean_speedup) + "x" + SlowerConfigsText(a);
    const size_t configs = ConfigNames().size();
    if (OutcomeTimed(a.outcome) && a.configs.size() < configs)
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

std::vector<std::string> RunState::ConfigNames() const {
  std::vector<std::string> names;
  for (const ConfigSpec& c : op_.configs)
    if (opts_.configs.empty() || std::find(opts_.configs.begin(), opts_.configs.end(), c.name) != opts_.configs.end())
      names.push_back(c.name);
  return names;
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

}  // namespace forgek
