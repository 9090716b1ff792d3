// The llm agent's population: the run's correct programs and earlier runs' best, and the rule
// that picks the parents of a fresh request (docs/llm-agent.md "Parents").
#pragma once

#include <string>
#include <vector>

#include "forgek/agent/agent.h"

namespace forgek {

// A correct, timed program the model may be shown as a parent.
struct ParentProgram {
  std::string hash;          // candidate hash
  std::string label;         // "attempt 3 of this run" | "attempt 12 of run 1a2b3c4d"
  bool this_run = false;
  std::string source;
  std::string family;        // "" for free-form
  ParamAssignment params;
  std::string outcome;       // faster | same | slower (this run); "" for earlier runs
  double geomean_speedup = 0;  // vs this run's incumbent (earlier runs: vs theirs)
  double sol_pct = 0;        // geomean speed-of-light % over the configs measured
  std::vector<ConfigTime> configs;  // this run only
  std::string bottleneck;    // its profile's analysis, when it was profiled
  std::string architecture;  // family key, or the sorted mechanisms of a free-form kernel
};

// Every correct, timed program of ctx.history that has a source, then every prior result with
// a source that is not already there; ranked by fitness: geomean SOL % (an absolute measure
// that stays comparable across runs and incumbents), ties by speedup.
std::vector<ParentProgram> ParentPopulation(const ProposalContext& ctx);

// The parents of one fresh conversation and what it asks for.
struct ParentChoice {
  bool new_architecture = false;  // ask for another architecture; parents are inspirations only
  std::vector<const ParentProgram*> parents;  // the first is the one to improve (unless new_architecture)
};

// The rule. Islands: the best program of each architecture, best first. Conversation `index`
// (0-based, counted over the run's fresh conversations) explores (asks for a new architecture)
// when the population is empty or index % 4 == 3; the others improve a parent: every other one
// the best island, the rest the runners-up in turn, so good second architectures keep evolving.
// Up to `max_parents` programs are shown: the chosen one first, then the best other islands.
ParentChoice ChooseParents(const std::vector<ParentProgram>& population, int index, int max_parents);

}  // namespace forgek
