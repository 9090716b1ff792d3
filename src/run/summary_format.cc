// Printing a run's summary: a table for people, JSON for scripts.
#include <cstdarg>
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "forgek/report/torch_yardstick.h"
#include "forgek/run/run.h"

namespace forgek {
namespace {

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

std::string RunSummaryText(const RunSummary& s, bool all_decisions) {
  std::string out;
  out += Printf("run %s: %s on %s%s%s, agent %s\n", s.run_id.empty() ? "(unrecorded)" : s.run_id.c_str(),
                s.operator_name.c_str(), s.arch.c_str(), s.device.empty() ? "" : ", ", s.device.c_str(), s.agent.c_str());
  out += Printf("incumbent: %s\n", s.incumbent.c_str());
  if (!s.error.empty()) out += "failed: " + s.error + "\n";
  std::string counts;
  for (const auto& [name, n] : s.outcomes) counts += Printf(" %s=%d", name.c_str(), n);
  std::string stop = s.stop_reason == StopReason::exhausted ? "exhausted (the agent had nothing new to offer)"
                                                             : StopReasonText(s);
  out += Printf("attempts: %d (%.1f per minute, %.1f s) stopped by %s;%s\n", s.attempts, s.candidates_per_minute,
                s.wall_s, stop.c_str(), counts.c_str());
  if (!s.stages.empty()) {
    std::string stages;
    for (const RunStage& st : s.stages)
      stages += Printf("%s%s %.1f s%s", stages.empty() ? "" : ", ", st.name.c_str(), st.seconds,
                       st.note.empty() ? "" : (" (" + st.note + ")").c_str());
    out += "stages: " + stages + "\n";
  }
  if (!s.agent_note.empty()) out += "agent: " + s.agent_note + "\n";
  if (s.best_iteration >= 0) {
    std::string params;
    for (const auto& [k, v] : s.best_params) params += Printf("%s%s=%lld", params.empty() ? "" : ",", k.c_str(), static_cast<long long>(v));
    // Attempts are numbered from 1 wherever a person reads them (the JSON keeps the store's 0-based
    // iteration).
    out += Printf("best: attempt %d, %s [%s], %.3fx vs incumbent, %.3fx vs expert\n", s.best_iteration + 1,
                  s.best_family.empty() ? "free-form" : s.best_family.c_str(), params.c_str(), s.best_speedup,
                  s.best_speedup_vs_expert);
  }
  if (!s.configs.empty()) {
    // SOL %: of the calibrated bound (max(roofline, launch floor)); "sheet": of the datasheet's.
    out += Printf("%-22s %12s %12s %12s %9s %9s %8s %8s %10s %8s\n", "config", "incumbent us", "best us", "expert us",
                  "speedup", "vs expert", "SOL% inc", "SOL% best", "sheet best", "floor us");
    for (const ConfigComparison& c : s.configs)
      out += Printf("%-22s %12.2f %12.2f %12.2f %8.3fx %8.3fx %7.1f%% %7.1f%% %9.1f%% %8.2f  %s\n", c.config.c_str(),
                    c.incumbent_us, c.best_us, c.expert_us, c.speedup, c.speedup_vs_expert, c.incumbent_sol_pct,
                    c.best_sol_pct, c.best_datasheet_sol_pct, c.floor_us, c.verdict.c_str());
  }
  const bool torch = std::any_of(s.configs.begin(), s.configs.end(),
                                 [](const ConfigComparison& c) { return c.torch.asked(); });
  if (torch) {
    // Speedups are torch's time over the kernel's, both from one evaluation: above 1 forgek is faster.
    out += "PyTorch beside the kernel that serves each config (cold L2, median; not the sealing rule):\n";
    for (const ConfigComparison& c : s.configs)
      if (c.torch.asked())
        out += Printf("  %-20s %s %.2f us; ", c.config.c_str(), c.torch_kernel.c_str(), c.torch_kernel_us) +
               TorchYardstickText(c.torch, c.torch_kernel_us) + "\n";
  }
  if (!s.dispatch.empty()) {
    out += "dispatch (the kernel serving each config):\n";
    for (const DispatchRow& d : s.dispatch)
      out += "  " + d.config + ": " + d.kernel + " - " + d.reason + "\n";
  }
  if (!s.lineage.empty()) {
    out += "lineage of the best (attempt: parent -> child, what changed, the effect):\n";
    for (const LineageStep& l : s.lineage) {
      std::string from = l.parent_iteration < 0 ? std::string("new") : Printf("attempt %d (%.3fx)", l.parent_iteration + 1, l.parent_speedup);
      std::string change = l.change.empty() ? "" : ": " + l.change;
      if (change.size() > 160) change = change.substr(0, 157) + "...";
      out += Printf("  %s -> attempt %d %s %.3fx", from.c_str(), l.iteration + 1, l.outcome.c_str(), l.speedup);
      if (l.parent_iteration >= 0 && l.parent_speedup > 0) out += Printf(" (%+.1f%%)", 100.0 * (l.speedup / l.parent_speedup - 1));
      out += change + "\n";
    }
  }
  if (s.spend.requests > 0) {
    out += Printf("llm: %lld requests, %lld + %lld tokens, $%.4f; $%.4f per attempt, ", static_cast<long long>(s.spend.requests),
                  static_cast<long long>(s.spend.input_tokens), static_cast<long long>(s.spend.output_tokens),
                  s.spend.cost_usd, s.cost_per_attempt);
    out += s.improvements ? Printf("$%.4f per improvement (%d)\n", s.cost_per_improvement, s.improvements)
                          : std::string("no improvement\n");
  }
  if (!s.decisions_learned.empty()) {
    out += Printf("knowledge changed by this run (%zu decision(s), controlled comparisons only):\n",
                  s.decisions_learned.size());
    size_t shown = all_decisions ? s.decisions_learned.size() : std::min(s.decisions_learned.size(), kSummaryDecisionLines);
    for (size_t i = 0; i < shown; ++i) out += "  " + s.decisions_learned[i] + "\n";
    if (shown < s.decisions_learned.size())
      out += Printf("  ... %zu more (-v shows all; forgek knowledge list --op %s)\n", s.decisions_learned.size() - shown,
                    s.operator_name.c_str());
  }
  for (const std::string& n : s.knowledge_notes) out += "  " + n + "\n";
  if (!s.degraded.empty()) {
    out += "degraded:\n";
    for (const DegradedStage& d : s.degraded) out += "  " + d.stage + ": " + d.reason + "\n";
  }
  out += (s.seal_id.empty() ? s.seal_reason : "seal " + s.seal_id + " (" + s.seal_reason + ")") + "\n";
  for (const std::string& line : s.outside_shapes) out += "  " + line + "\n";
  return out;
}

std::string RunSummaryJson(const RunSummary& s) {
  nlohmann::json configs = nlohmann::json::array();
  for (const ConfigComparison& c : s.configs) {
    configs.push_back({{"config", c.config},
                       {"incumbent_us", c.incumbent_us},
                       {"best_us", c.best_us},
                       {"expert_us", c.expert_us},
                       {"speedup", c.speedup},
                       {"speedup_vs_expert", c.speedup_vs_expert},
                       {"incumbent_sol_pct", c.incumbent_sol_pct},
                       {"best_sol_pct", c.best_sol_pct},
                       {"incumbent_datasheet_sol_pct", c.incumbent_datasheet_sol_pct},
                       {"best_datasheet_sol_pct", c.best_datasheet_sol_pct},
                       {"floor_us", c.floor_us},
                       {"verdict", c.verdict}});
    if (c.torch.asked()) {
      nlohmann::json torch = TorchYardstickJson(c.torch, c.torch_kernel_us);
      torch["kernel"] = c.torch_kernel;
      torch["kernel_us"] = c.torch_kernel_us;
      configs.back()["torch"] = std::move(torch);
    }
  }
  nlohmann::json lineage = nlohmann::json::array();
  for (const LineageStep& l : s.lineage)
    lineage.push_back({{"iteration", l.iteration},
                       {"parent_iteration", l.parent_iteration < 0 ? nlohmann::json(nullptr) : nlohmann::json(l.parent_iteration)},
                       {"change", l.change},
                       {"outcome", l.outcome},
                       {"speedup", l.speedup},
                       {"parent_speedup", l.parent_speedup},
                       {"cost_usd", l.cost_usd}});
  nlohmann::json dispatch = nlohmann::json::array();
  for (const DispatchRow& d : s.dispatch)
    dispatch.push_back({{"config", d.config}, {"kernel", d.kernel}, {"reason", d.reason}, {"mechanisms", d.mechanisms}});
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : s.best_params) params[k] = v;
  nlohmann::json stages = nlohmann::json::array();
  for (const RunStage& st : s.stages) stages.push_back({{"name", st.name}, {"seconds", st.seconds}, {"note", st.note}});
  nlohmann::json degraded = nlohmann::json::array();
  for (const DegradedStage& d : s.degraded) degraded.push_back({{"stage", d.stage}, {"reason", d.reason}});
  nlohmann::json j = {{"run_id", s.run_id},
                      {"operator", s.operator_name},
                      {"arch", s.arch},
                      {"device", s.device},
                      {"agent", s.agent},
                      {"incumbent", s.incumbent},
                      {"stop_reason", StopReasonText(s)},
                      {"agent_note", s.agent_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.agent_note)},
                      {"status", s.status},
                      {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)},
                      {"attempts", s.attempts},
                      {"outcomes", s.outcomes},
                      {"best", {{"speedup", s.best_speedup},
                                {"speedup_vs_expert", s.best_speedup_vs_expert},
                                {"iteration", s.best_iteration},
                                {"candidate", s.best_candidate_hash},
                                {"family", s.best_family},
                                {"params", params}}},
                      {"best_so_far", s.best_so_far},
                      {"configs", configs},
                      {"decisions_learned", s.decisions_learned},
                      {"dispatch", dispatch},
                      {"knowledge_notes", s.knowledge_notes},
                      {"degraded", degraded},
                      {"seal", s.seal_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.seal_id)},
                      {"sealed_candidate", s.sealed_candidate_hash.empty() ? nlohmann::json(nullptr)
                                                                           : nlohmann::json(s.sealed_candidate_hash)},
                      {"seal_reason", s.seal_reason},
                      {"outside_shapes", s.outside_shapes},
                      {"sealed_kernel", s.sealed_kernel},
                      {"sealed_mechanisms", s.sealed_mechanisms},
                      {"wall_s", s.wall_s},
                      {"candidates_per_minute", s.candidates_per_minute},
                      {"stages", stages},
                      {"lineage", lineage},
                      {"llm", {{"requests", s.spend.requests},
                               {"input_tokens", s.spend.input_tokens},
                               {"output_tokens", s.spend.output_tokens},
                               {"cost_usd", s.spend.cost_usd},
                               {"cost_per_attempt", s.cost_per_attempt},
                               {"improvements", s.improvements},
                               {"cost_per_improvement", s.cost_per_improvement}}}};
  return j.dump(2);
}

int RunExitCode(const RunSummary& s) {
  return s.status == "failed" || s.stop_reason == StopReason::agent_failed ? 1 : 0;
}

std::string StopReasonText(const RunSummary& s) {
  if (s.stop_reason == StopReason::agent_failed) return "agent: " + s.stop_detail;
  return StopReasonName(s.stop_reason);
}

int RunSummary::AttemptsToReach(double speedup) const {
  for (size_t i = 0; i < best_so_far.size(); ++i)
    if (best_so_far[i] >= speedup) return static_cast<int>(i) + 1;
  return -1;
}

}  // namespace forgek
