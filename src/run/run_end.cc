// The run's end: spend and lineage in the summary, the run closed with its status.
#include "run_state.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/seal/dispatch.h"
#include "forgek/knowledge/store.h"
#include "forgek/core/torch_helper.h"
#include "forgek/report/torch_yardstick.h"
#include "run_text.h"

namespace forgek {
namespace {

// Why a run that reached its end failed, "" when it did not: the agent gave up (the stop reason
// says why), or a --compile-only run tried candidates and not one compiled.
std::string EndFailure(const RunOptions& opts, const RunSummary& s) {
  if (s.stop_reason == StopReason::agent_failed) return "the agent stopped the run: " + s.stop_detail;
  if (!opts.compile_only || s.attempts == 0 || s.stop_reason == StopReason::interrupted) return "";
  auto compiled = s.outcomes.find(OutcomeName(Outcome::compiled));
  if (compiled != s.outcomes.end() && compiled->second > 0) return "";
  return "every one of the " + std::to_string(s.attempts) +
         " candidates failed to compile (see the compiler errors above)";
}

}  // namespace

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
  nlohmann::json j = {{"stop_reason", StopReasonText(*summary_)}, {"attempts", summary_->attempts},
                      {"best_speedup", summary_->best_speedup}, {"seal", summary_->seal_id},
                      {"seal_reason", summary_->seal_reason},   {"wall_s", summary_->wall_s}};
  if (!summary_->error.empty()) j["error"] = summary_->error;
  // PyTorch beside the kernel serving each config (an operator with a PyTorch golden): `forgek
  // report` shows it beside the seal.
  nlohmann::json torch = nlohmann::json::array();
  for (const ConfigComparison& c : summary_->configs) {
    if (!c.torch.asked()) continue;
    nlohmann::json t = TorchYardstickJson(c.torch, c.torch_kernel_us);
    t["config"] = c.config;
    t["kernel"] = c.torch_kernel;
    t["kernel_us"] = c.torch_kernel_us;
    torch.push_back(std::move(t));
  }
  if (!torch.empty()) j["torch"] = std::move(torch);
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
  if (summary_->stop_reason == StopReason::none) summary_->stop_reason = StopReason::iterations;
  FillSpendAndLineage();
  FillBest();
  if (services_.store && services_.evaluator && !opts_.compile_only && have_best_ &&
      summary_->stop_reason != StopReason::interrupted) {
    std::map<std::string, double> best_metrics;
    std::string metrics_config, analysis_note;
    auto stage_start = std::chrono::steady_clock::now();
    AnalyzeBest(&best_metrics, &metrics_config, &analysis_note);
    AddStage("analysis of the best", SecondsSince(stage_start), analysis_note);
    stage_start = std::chrono::steady_clock::now();
    std::string ablation_note;
    RunAblations(best_metrics, metrics_config, &ablation_note);
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
  if (!opts_.compile_only && opts_.torch_yardstick && summary_->stop_reason != StopReason::interrupted &&
      !YardstickOf(op_).empty()) {
    const auto torch_start = std::chrono::steady_clock::now();
    MeasureTorchYardstick();
    AddStage("PyTorch yardstick", SecondsSince(torch_start));
  }
  summary_->wall_s = SecondsRun();
  summary_->candidates_per_minute = summary_->wall_s > 0 ? summary_->attempts / (summary_->wall_s / 60.0) : 0;
  // A run that failed keeps what it found (a seal included) and is recorded failed with its reason.
  std::string failure = EndFailure(opts_, *summary_);
  if (!failure.empty()) {
    spdlog::error("run failed: {}", failure);
    summary_->error = failure;
    return CloseRun("failed", err);
  }
  return CloseRun(summary_->stop_reason == StopReason::interrupted ? "interrupted" : "finished", err);
}

bool RunState::Fail(const std::string& reason, std::string* err) {
  summary_->stop_reason = StopReason::error;
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
