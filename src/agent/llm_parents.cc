// The llm agent's population and parent rule.
#include "llm_parents.h"

#include <algorithm>
#include <set>

#include "forgek/verdict/verdict.h"

namespace forgek {
namespace {

std::string ArchitectureOf(const std::string& family, std::vector<std::string> mechanisms) {
  if (!family.empty()) return family;
  if (mechanisms.empty()) return "free-form";
  std::sort(mechanisms.begin(), mechanisms.end());
  std::string out = "free-form:";
  for (size_t i = 0; i < mechanisms.size(); ++i) out += (i ? "+" : "") + mechanisms[i];
  return out;
}

// 0 when no config has a SOL figure: such a parent ranks below every one that has.
double GeomeanSol(const std::vector<ConfigTime>& configs) {
  std::vector<double> sol;
  for (const ConfigTime& c : configs) sol.push_back(c.sol_pct);
  return GeomeanOfPositive(sol);
}

}  // namespace

std::vector<ParentProgram> ParentPopulation(const ProposalContext& ctx) {
  std::vector<ParentProgram> pop;
  std::set<std::string> seen;
  for (const AttemptSummary& a : ctx.history) {
    if (!OutcomeTimed(a.outcome) || a.source.empty() || !seen.insert(a.candidate_hash).second) continue;
    ParentProgram p;
    p.hash = a.candidate_hash;
    p.label = "attempt " + std::to_string(a.iteration + 1) + " of this run";  // numbered from 1, as people count
    p.this_run = true;
    p.source = a.source;
    p.family = a.family;
    p.params = a.params;
    p.outcome = OutcomeName(a.outcome);
    p.geomean_speedup = a.geomean_speedup;
    p.configs = a.configs;
    p.bottleneck = a.bottleneck;
    p.sol_pct = GeomeanSol(a.configs);
    p.architecture = ArchitectureOf(a.family, a.mechanisms);
    pop.push_back(std::move(p));
  }
  for (const PriorResult& r : ctx.prior_results) {
    if (r.kernel_source.empty() || !seen.insert(r.candidate_hash).second) continue;
    ParentProgram p;
    p.hash = r.candidate_hash;
    p.label = r.source;
    p.source = r.kernel_source;
    p.family = r.family;
    p.params = r.params;
    p.geomean_speedup = r.geomean_speedup;
    p.sol_pct = r.sol_pct;
    p.architecture = r.family.empty() ? "earlier free-form " + r.candidate_hash.substr(0, 8) : r.family;
    pop.push_back(std::move(p));
  }
  std::stable_sort(pop.begin(), pop.end(), [](const ParentProgram& x, const ParentProgram& y) {
    if (x.sol_pct != y.sol_pct) return x.sol_pct > y.sol_pct;
    return x.geomean_speedup > y.geomean_speedup;
  });
  return pop;
}

ParentChoice ChooseParents(const std::vector<ParentProgram>& population, int index, int max_parents) {
  ParentChoice choice;
  std::vector<const ParentProgram*> islands;  // best of each architecture, best first
  std::set<std::string> architectures;
  for (const ParentProgram& p : population)
    if (architectures.insert(p.architecture).second) islands.push_back(&p);
  choice.new_architecture = islands.empty() || index % 4 == 3;
  if (islands.empty() || max_parents <= 0) return choice;

  size_t primary = 0;
  if (!choice.new_architecture && islands.size() > 1) {
    int exploit = index - index / 4;  // how many improving conversations came before this one
    if (exploit % 2 == 1) primary = 1 + static_cast<size_t>(exploit / 2) % (islands.size() - 1);
  }
  choice.parents.push_back(islands[primary]);
  for (size_t i = 0; i < islands.size() && static_cast<int>(choice.parents.size()) < max_parents; ++i)
    if (i != primary) choice.parents.push_back(islands[i]);
  return choice;
}

}  // namespace forgek
