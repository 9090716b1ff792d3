// The agent interface: propose(context) -> candidates. Implemented by builtin, llm and replay.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "forgek/candidate.h"
#include "forgek/decision.h"
#include "forgek/evaluation.h"
#include "forgek/operator_spec.h"
#include "forgek/profile.h"

namespace forgek {

// One evaluated proposal of this run, as the agent sees it next time.
struct AttemptSummary {
  int iteration = 0;
  std::string candidate_hash;   // content hash of source + params
  std::string family;           // family file (relative to the operator), or "" for free-form
  ParamAssignment params;
  Outcome outcome = Outcome::crash;
  std::string feedback;         // compiler / checker / timing feedback, actionable
  double geomean_speedup = 0;   // vs the incumbent (0 when not timed)
};

// A candidate that did well in an earlier run of this operator, on configs of the shape regimes
// this run serves: where the builtin agent starts before it draws anything at random.
struct PriorResult {
  std::string family;         // family file (relative to the operator)
  ParamAssignment params;
  double sol_pct = 0;         // geomean speed-of-light % over the matching configs it was measured on
  std::string source;         // "attempt 12 of run 1a2b3c4d on M64_N8192_K8192: 78.1% SOL, 1.056x"
};

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
  int max_candidates = 4;                   // how many proposals the loop wants now
};

// One proposal: a candidate (possibly a family) plus the param assignment to compile it with.
struct Proposal {
  Candidate candidate;
  ParamAssignment params;
  std::string family;     // family file it instantiates, or ""
  std::string rationale;  // why the agent proposed it (recorded with the attempt)
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string Name() const = 0;
  // Fills `out` with up to ctx.max_candidates proposals; false with `err` on a failure that
  // should stop the run (e.g. the LLM budget is spent). An empty `out` means nothing new to try.
  virtual bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) = 0;
};

}  // namespace forgek
