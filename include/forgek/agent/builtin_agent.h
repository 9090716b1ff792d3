// The builtin agent: evolutionary search over an operator's families, steered by the store's decisions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "forgek/agent/agent.h"

namespace forgek {

struct BuiltinAgentOptions {
  uint64_t seed = 1;          // the search is reproducible for a given seed and history
  int elite_count = 4;        // best attempts kept as parents
  double crossover_rate = 0.3;
  double base_move_rate = 0.15;  // architecture moves (to another family), rising with stagnation
  int prior_count = 4;        // best results of earlier runs re-measured first (warm start)
};

// Proposals come from: (0) a warm start, the best results of earlier runs (ctx.prior_results)
// that are valid instances of a family today; (1) a first generation that covers every family, biased by validated
// decisions (settings applied) and away from refuted ones; (2) then elitism with mutation and
// crossover inside the best families, and architecture moves to other families, more often when
// the run stagnates. No proposal repeats an attempt of the run (content hash).
class BuiltinAgent : public Agent {
 public:
  explicit BuiltinAgent(BuiltinAgentOptions opts = {});
  ~BuiltinAgent() override;
  std::string Name() const override { return "builtin"; }
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace forgek
