// The agent interface: propose(context) -> candidates. Implemented by builtin, llm and replay.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/stop_reason.h"
#include "forgek/core/decision.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/profile.h"

namespace forgek {

// One config's measurement of an attempt: the candidate against the incumbent, with the verdict
// of forgek/verdict.h (faster | same | slower beyond noise).
struct ConfigTime {
  std::string config;
  double candidate_us = 0, incumbent_us = 0, sol_pct = 0;
  std::string verdict;
};

// One evaluated proposal of this run, as the agent sees it next time.
struct AttemptSummary {
  int iteration = 0;
  std::string candidate_hash;   // content hash of source + params
  std::string family;           // family file (relative to the operator), or "" for free-form
  ParamAssignment params;
  Outcome outcome = Outcome::crash;
  std::string feedback;         // compiler / checker / timing feedback, actionable
  double geomean_speedup = 0;   // vs the incumbent (0 when not timed)
  std::vector<ConfigTime> configs;  // per config, when timed
  std::string bottleneck;       // what its profile shows (new bests are profiled), "" when not profiled
  std::string source;           // the candidate's source (a family's, for an instance)
  std::vector<std::string> mechanisms;  // from its manifest
  std::string parent;           // candidate hash of the attempt it changes ("" for none)
  std::string change;           // what changed against the parent, one line
  double cost_usd = 0;          // LLM spend that produced it (0 for searched instances)
  int64_t tokens = 0;
};

// A candidate that did well in an earlier run of this operator, on configs of the shape regimes
// this run serves: where the builtin agent starts before it draws anything at random.
struct PriorResult {
  std::string family;         // family file (relative to the operator)
  ParamAssignment params;
  double sol_pct = 0;         // geomean speed-of-light % over the matching configs it was measured on
  std::string source;         // "attempt 12 of run 1a2b3c4d on M64_N8192_K8192: 78.1% SOL, 1.056x"
  std::string candidate_hash;
  std::string kernel_source;  // the candidate's source (the agents that rewrite code need it)
  double geomean_speedup = 0; // against the incumbent of its own run
};

// What serves one config when the incumbent is a dispatch (a kernel per config).
struct IncumbentServer {
  std::string config;
  std::string kernel;  // "family families/tiled.cu with TILE=8", "reference (cublas.gemm_bf16)"
  std::string source;  // the kernel's source; "" for a library call
};

// Family keys of families a model wrote (params with lists of values): "llm/<name>-<hash8>.cu".
// The run keeps those that won and offers them to later runs, of every agent, as families.
inline constexpr const char* kInventedFamilyPrefix = "llm/";

struct ProposalContext {
  const OperatorSpec* op = nullptr;
  std::string arch;                         // sm90 | sm100
  std::string hardware;                     // short text: GPU, SMs, L2, peaks
  std::vector<KernelProfile> incumbent_analysis;
  std::string incumbent_summary;            // observations rendered as text
  std::vector<RetrievedDecision> decisions;
  std::vector<AttemptSummary> history;      // this run so far
  std::vector<PriorResult> prior_results;   // best of earlier runs, best first (knowledge store)
  std::vector<Candidate> families;          // the operator's families, parsed
  const Candidate* incumbent_source = nullptr;  // the incumbent candidate when it is a kernel
  // A dispatch incumbent: per config, the kernel that serves it (each config is timed against its
  // own); empty when one kernel serves every config.
  std::vector<IncumbentServer> incumbent_dispatch;
  int max_candidates = 4;                   // how many proposals the loop wants now
};

// One proposal: a candidate (possibly a family) plus the param assignment to compile it with.
struct Proposal {
  Candidate candidate;
  ParamAssignment params;
  std::string family;     // family file it instantiates, or ""
  std::string rationale;  // why the agent proposed it (recorded with the attempt)
  std::string parent;     // candidate hash of the attempt it changes, or ""
  std::string change;     // what changed against the parent, one line
  double cost_usd = 0;    // LLM spend of the exchanges that produced it
  int64_t tokens = 0;
};

// Tokens and money an agent spent so far (zero for agents that ask no model).
struct AgentSpend {
  int64_t requests = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string Name() const = 0;
  // Fills `out` with up to ctx.max_candidates proposals; false with `err` when the agent cannot go
  // on (a failure, or its budget is spent: see BudgetSpent). An empty `out` means nothing new to try.
  virtual bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) = 0;
  virtual AgentSpend Spent() const { return {}; }
  // The agent's own budget that is spent (max_cost, max_tokens), or none while none is: after a
  // failed Propose, a spent budget ends the run normally (like --time) rather than as a failure.
  virtual StopReason BudgetSpent() const { return StopReason::none; }
  // Whether the run should profile each new best for it (AttemptSummary::bottleneck): GPU time
  // that only agents reading the analysis should cost.
  virtual bool WantsProfiles() const { return false; }
  // How the agent proposes now where that departs from its usual way, one line for the run's
  // progress and summary ("the model had nothing new after attempt 4 ...: the search tunes the
  // families it wrote"), or "".
  virtual std::string Note() const { return ""; }
};

}  // namespace forgek
