// The run loop: propose, compile, evaluate, learn, and seal the winner (docs/ARCHITECTURE.md, "One candidate").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "forgek/core/stop_reason.h"
#include "forgek/agent/agent.h"
#include "forgek/compile/compile.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

class Store;

struct RunOptions {
  std::string arch = "sm90";
  int iterations = 24;       // attempts (evaluated candidates); 0: no limit
  double time_s = 0;         // wall-time budget in seconds; 0: none
  int patience = 0;          // stop after this many attempts without a new best; 0: never
  int batch = 4;             // proposals asked of the agent at a time (compiled in parallel)
  bool compile_only = false; // agent + compile, no GPU
  int seeds = 2;             // fresh seeds for correctness
  double deadline_s = 10;    // per launch
  double min_gain = 0.01;    // a seal must be at least 1% faster beyond noise
  int confirm = 3;           // `faster` candidates confirmed at most, best first, until one holds
  bool allow_seal = true;
  // The PyTorch yardstick stage at the end (YardstickOf): torch eager and torch.compile beside the
  // kernel serving each config. false: --no-torch.
  bool torch_yardstick = true;
  int ablations = -1;        // ablations of the best after the search (timed interleaved against it);
                             // -1: iterations/8, between 1 and 4; 0: none
  std::vector<std::string> configs;  // evaluate only these (sealing then needs every config: off)
  std::string resume_run;    // continue this run's history
};

// What the loop works with. Only `agent` and `compiler` are required.
struct RunServices {
  Agent* agent = nullptr;
  Compiler* compiler = nullptr;
  Evaluator* evaluator = nullptr;  // null with compile_only
  Store* store = nullptr;          // null: nothing recorded, nothing learned across runs
  // Evaluators on further GPUs of the host: candidates go to whichever evaluator is free; each
  // times its candidate against the incumbent on its own GPU. The first evaluator also does
  // the incumbent's analysis and the sealing confirmation.
  std::vector<Evaluator*> more_evaluators;
  std::function<bool()> stop_requested;               // Ctrl-C: finish the current evaluation, then stop
  std::function<void(const std::string&)> progress;   // one status line (live or logged)
  std::function<void(const std::string&)> run_started;  // the run's id, once it is recorded
  // When the loop starts: the point its --time budget ends (nothing without one), so that the
  // agent's requests end with it.
  std::function<void(std::optional<std::chrono::steady_clock::time_point>)> budget_ends;
};

struct ConfigComparison {
  std::string config;
  double incumbent_us = 0, best_us = 0, expert_us = 0;
  double speedup = 0;         // incumbent / best
  double speedup_vs_expert = 0;
  // % of the config's calibrated bound (max(roofline, launch floor), ConfigResult::sol_us), and of
  // the bound from the datasheet's peaks (0: no datasheet for this device).
  double incumbent_sol_pct = 0, best_sol_pct = 0;
  double incumbent_datasheet_sol_pct = 0, best_datasheet_sol_pct = 0;
  double floor_us = 0;  // the launch floor in that bound (0: unknown)
  // The config's verdict in words: "best 0.988x, slower beyond noise", "best 1.210x, faster".
  std::string verdict;
  // PyTorch beside the kernel that serves the config after the run (an operator whose golden is a
  // PyTorch problem): torch eager and torch.compile, and that kernel ("seal" or "incumbent") timed
  // in the same evaluation. Not part of the sealing rule.
  TorchYardstick torch;
  std::string torch_kernel;
  double torch_kernel_us = 0;
};

// Which kernel serves a config in the run's dispatch, and why ("attempt 7, 1.210x, faster
// beyond noise"; "incumbent: best 0.988x, slower beyond noise").
struct DispatchRow {
  std::string config;
  std::string kernel;
  std::string reason;
  std::vector<std::string> mechanisms;  // those the serving kernel claims (none for a library reference)
};

// One step of the best candidate's ancestry: the attempt, its parent, what changed, the effect.
struct LineageStep {
  int iteration = -1;         // 0-based, as the store keeps it; text shows it from 1 ("attempt 1")
  int parent_iteration = -1;  // -1: no parent in this run (a fresh proposal)
  std::string change;         // one line
  std::string outcome;
  double speedup = 0, parent_speedup = 0;  // geomean vs the incumbent
  double cost_usd = 0;
};

// A stage of the run that lost its input and went on without it: the run's result holds, but it
// was reached with less (no knowledge, no analysis of the incumbent, no retrieved decisions, ...).
struct DegradedStage {
  std::string stage;   // families | seed | knowledge | incumbent | profile | analysis | resume |
                       // prior_results | retrieval | evidence | yardstick
  std::string reason;  // what went wrong, as the failing step said it
};

// A stage of a run and its wall time: start, incumbent analysis, search, analysis of the best,
// ablations, confirmation and seal.
struct RunStage {
  std::string name;
  double seconds = 0;
  std::string note;  // "2 of 2 configs from the store", "cut by --time after 1"
};

struct RunSummary {
  std::string run_id;
  std::string operator_name, arch, agent, device;
  std::string incumbent;      // "reference (cublas.gemm_bf16)" or "seal <id>"
  StopReason stop_reason = StopReason::none;
  std::string stop_detail;    // agent_failed: why the agent could not go on
  std::string status;         // the run's status in the store: finished | interrupted | failed
  std::string error;          // why the run failed (status failed), else ""
  int attempts = 0;
  std::map<std::string, int> outcomes;  // outcome name -> count
  std::string agent_note;     // how the agent proposed where it departed from its usual way (Agent::Note), or ""
  double best_speedup = 0;    // geomean vs the incumbent (0: nothing timed)
  double best_speedup_vs_expert = 0;
  int best_iteration = -1;    // 0-based (the text says "attempt best_iteration + 1")
  std::string best_candidate_hash, best_family;
  ParamAssignment best_params;
  std::vector<double> best_so_far;  // after each attempt: the best geomean speedup so far
  std::vector<ConfigComparison> configs;
  std::vector<std::string> decisions_learned;  // decisions this run's comparisons changed, one line each,
                                               // validated and refuted first
  std::vector<std::string> knowledge_notes;    // claims checked against SASS, ablations run, retrieval
  std::vector<DispatchRow> dispatch;  // per config, the kernel that serves it (empty: one kernel)
  std::vector<DegradedStage> degraded;         // stages that ran degraded, each reason once
  std::string seal_id;        // "" when nothing was sealed
  std::string sealed_candidate_hash;  // the sealed candidate (not always the best of the search)
  std::string sealed_kernel;          // "tiled.cu TILE=8,UNROLL=2"; a dispatch: its kernels per config in `dispatch`
  std::vector<std::string> sealed_mechanisms;  // the mechanisms the sealed kernel(s) claim
  std::string seal_reason;    // why it was sealed, or why not
  // Per kernel a seal would serve, its correctness on shapes outside the suite (operator.json
  // "ranges"), one line each: "attempt 7 (...): correct on 3 shapes outside the suite (M=...)".
  std::vector<std::string> outside_shapes;
  double wall_s = 0;  // the whole run, its end (confirmation, analysis of the best, ablations) included
  double candidates_per_minute = 0;
  std::vector<RunStage> stages;  // in the order they ran
  // What the agent spent asking a model (zero for the builtin agent), per attempt and per
  // improvement (an attempt that raised the best so far).
  AgentSpend spend;
  int improvements = 0;
  double cost_per_attempt = 0, cost_per_improvement = 0;
  std::vector<LineageStep> lineage;  // the best candidate's ancestry, oldest first

  // The first attempt (1-based) whose best-so-far reaches `speedup`; -1 when never.
  int AttemptsToReach(double speedup) const;
};

// Runs the loop for `op`. Returns false with `err` for failures that prevent or end a run (no
// incumbent, a store error, an exception); a run that stops early still returns true with its
// summary. A run that had begun is never left `running`: on failure it is recorded `failed` with
// its reason (best effort: a store that refuses even that write is named in `err`), and
// `summary` holds what it did (summary->run_id is "" when no run was recorded).
bool RunOptimisation(const OperatorSpec& op, const RunOptions& opts, RunServices& services, RunSummary* summary,
                     std::string* err);

// The sealing rule lives in forgek/verdict.h (DecideSeal), with every other comparison of times.

}  // namespace forgek

namespace forgek {

// The end-of-run summary as text for a person (a table per config) and as JSON for scripts.
// At most kSummaryDecisionLines decision lines unless `all_decisions` (the CLI's -v).
constexpr size_t kSummaryDecisionLines = 10;
std::string RunSummaryText(const RunSummary& s, bool all_decisions = false);
std::string RunSummaryJson(const RunSummary& s);
// The exit status of a run that returned its summary: 0 when it ended (a budget such as --time,
// --max-cost or --max-tokens, patience, an agent with nothing new to offer: exhausted), 1 when it
// is recorded failed (the agent failed: HTTP authentication, quota; a --compile-only run in which
// no candidate compiled).
int RunExitCode(const RunSummary& s);
// The "stop_reason" of the JSON summary and the run's record: StopReasonName, and for an agent that
// failed "agent: <its words>".
std::string StopReasonText(const RunSummary& s);

}  // namespace forgek
