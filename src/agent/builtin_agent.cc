// The builtin evolutionary agent: a population over families with elitism, mutation, crossover,
// architecture moves, priors from the knowledge store and warm starts from earlier runs' best.
#include "forgek/core/json_parse.h"
#include "forgek/agent/builtin_agent.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "forgek/agent/family_space.h"
#include "forgek/core/hash.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/params.h"

namespace forgek {
namespace {

bool Matches(const ParamAssignment& settings, const ParamAssignment& params) {
  if (settings.empty()) return false;
  for (const auto& [name, value] : settings) {
    auto it = params.find(name);
    if (it == params.end() || it->second != value) return false;
  }
  return true;
}

bool Claims(const Candidate& family, const std::string& mechanism) {
  const auto& m = family.manifest.mechanisms;
  return std::find(m.begin(), m.end(), mechanism) != m.end();
}

std::string FamilyKey(const OperatorSpec& op, const Candidate& family) {
  namespace fs = std::filesystem;
  if (!op.dir.empty() && !family.path.empty()) {
    fs::path rel = fs::path(family.path).lexically_relative(op.dir);
    if (!rel.empty() && rel.native()[0] != '.') return rel.string();
  }
  return family.path.empty() ? family.manifest.name : family.path;
}

std::string DescribeChange(const ParamAssignment& from, const ParamAssignment& to) {
  std::string text;
  for (const auto& [name, value] : to) {
    auto it = from.find(name);
    if (it != from.end() && it->second == value) continue;
    if (!text.empty()) text += ", ";
    text += name + " " + (it == from.end() ? "?" : std::to_string(it->second)) + "->" + std::to_string(value);
  }
  return text.empty() ? "no change" : text;
}

struct Evaluated {
  const AttemptSummary* attempt;
  int family;
};

}  // namespace

struct BuiltinAgent::Impl {
  BuiltinAgentOptions opts;
  Rng rng;
  explicit Impl(BuiltinAgentOptions o) : opts(o), rng(o.seed) {}
};

BuiltinAgent::BuiltinAgent(BuiltinAgentOptions opts) : impl_(std::make_unique<Impl>(opts)) {}
BuiltinAgent::~BuiltinAgent() = default;

bool BuiltinAgent::Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  out->clear();
  if (!ctx.op) {
    *err = "builtin agent: no operator in the context";
    return false;
  }
  if (ctx.families.empty()) {
    *err = "builtin agent: operator " + ctx.op->name + " declares no families to search (operator.json \"families\")";
    return false;
  }
  const OperatorSpec& op = *ctx.op;
  Rng& rng = impl_->rng;
  const BuiltinAgentOptions& opts = impl_->opts;

  std::vector<FamilySpace> spaces;
  std::map<std::string, int> family_index;
  for (size_t i = 0; i < ctx.families.size(); ++i) {
    spaces.emplace_back(ctx.families[i], op, Coverage::some_config);
    family_index[FamilyKey(op, ctx.families[i])] = static_cast<int>(i);
  }

  // Priors. A decision bears on a family that claims its mechanism or has params controlling it.
  // Validated settings seed instances and raise the family's weight; a refuted setting is avoided in
  // fresh draws; a refuted whole mechanism lowers the weight. Decisions transferred from other
  // operators are priors to confirm: they seed and weigh less, and a refuted one forbids nothing.
  std::vector<double> weight(ctx.families.size(), 1.0);
  std::vector<std::vector<ParamAssignment>> preferred(ctx.families.size());
  std::vector<std::vector<ParamAssignment>> taboo(ctx.families.size());
  // A setting refuted in some of the run's shape regimes may still be the best in another (a cache
  // hint refuted on large shapes, validated on decode ones; a search instance may serve those
  // alone): it is avoided only where refuted in every regime the run serves, or in all ("any").
  std::set<std::string> run_regimes;
  for (const ConfigSpec& c : op.configs) run_regimes.insert(ShapeRegime(op, c.name));
  std::vector<std::map<ParamAssignment, std::set<std::string>>> refuted_in(ctx.families.size());
  for (const RetrievedDecision& d : ctx.decisions) {
    ParamAssignment settings = IntegerParamsOf(d.settings);
    const double trust = d.transferred ? 0.5 : 1.0;
    for (size_t f = 0; f < ctx.families.size(); ++f) {
      const CandidateManifest& m = ctx.families[f].manifest;
      bool controls = std::any_of(m.controls.begin(), m.controls.end(),
                                  [&](const ControlSpec& c) { return c.mechanism == d.mechanism; });
      if (!Claims(ctx.families[f], d.mechanism) && !controls) continue;
      const bool whole = d.setting.empty();
      if (d.verdict == DecisionVerdict::validated) {
        weight[f] *= 1.0 + trust * std::min(2.0, d.confidence * std::max(0.0, d.effect - 1.0) * 4.0);
        if (!whole && !settings.empty()) preferred[f].push_back(settings);
      } else if (d.verdict == DecisionVerdict::hypothesis) {
        weight[f] *= 1.0 + 0.5 * trust * d.confidence;
      } else if (d.verdict == DecisionVerdict::refuted && !d.transferred) {
        if (whole) weight[f] *= std::max(0.05, 1.0 - 0.8 * d.confidence);
        else if (!settings.empty()) refuted_in[f][settings].insert(d.regime.empty() ? "any" : d.regime);
      }
    }
  }
  for (size_t f = 0; f < ctx.families.size(); ++f)
    for (const auto& [settings, regimes] : refuted_in[f])
      if (regimes.count("any") || std::includes(regimes.begin(), regimes.end(), run_regimes.begin(), run_regimes.end()))
        taboo[f].push_back(settings);

  std::set<std::string> seen;
  std::vector<Evaluated> evaluated;
  std::vector<double> family_best(ctx.families.size(), 0.0);
  std::vector<int> family_tries(ctx.families.size(), 0);
  double best = 0;
  int stagnation = 0;
  for (const AttemptSummary& a : ctx.history) {
    seen.insert(a.candidate_hash);
    auto it = family_index.find(a.family);
    if (it == family_index.end()) continue;
    int f = it->second;
    ++family_tries[f];
    bool timed = OutcomeTimed(a.outcome);
    if (!timed) continue;
    evaluated.push_back({&a, f});
    family_best[f] = std::max(family_best[f], a.geomean_speedup);
    if (a.geomean_speedup > best * 1.005) {
      best = a.geomean_speedup;
      stagnation = 0;
    } else {
      ++stagnation;
    }
  }
  std::sort(evaluated.begin(), evaluated.end(), [](const Evaluated& x, const Evaluated& y) {
    return x.attempt->geomean_speedup > y.attempt->geomean_speedup;
  });
  if (evaluated.size() > static_cast<size_t>(opts.elite_count)) evaluated.resize(opts.elite_count);

  auto is_taboo = [&](int f, const ParamAssignment& p) {
    for (const ParamAssignment& t : taboo[f])
      if (Matches(t, p)) return true;
    return false;
  };
  // Accepts a proposal when it is new to the run and to this batch and (unless `warm`, or nothing
  // else is left: `honour_taboo` false) avoids refuted settings. A warm start is an earlier run's
  // measured winner: a refuted setting measured in some other context never hides it.
  bool honour_taboo = true;
  auto accept = [&](int f, ParamAssignment params, std::string rationale, bool warm = false) {
    if (!warm && is_taboo(f, params)) {
      if (honour_taboo) return false;
      rationale += " (it has a refuted setting: nothing without one was left to draw)";
    }
    std::string hash = CandidateHash(ctx.families[f].source, params);
    if (!seen.insert(hash).second) return false;
    Proposal p;
    p.candidate = ctx.families[f];
    p.params = std::move(params);
    p.family = FamilyKey(op, ctx.families[f]);
    p.rationale = std::move(rationale);
    out->push_back(std::move(p));
    return true;
  };
  auto fresh_instance = [&](int f, std::string why) {
    // A validated setting first, then random draws.
    for (const ParamAssignment& s : preferred[f]) {
      ParamAssignment base;
      if (!spaces[f].Sample(rng, &base)) return false;
      if (spaces[f].Apply(s, &base) > 0 && spaces[f].Valid(base) &&
          accept(f, base, why + "; settings from a validated decision"))
        return true;
    }
    for (int tries = 0; tries < 16; ++tries) {
      ParamAssignment p;
      if (!spaces[f].Sample(rng, &p)) return false;
      if (accept(f, p, why)) return true;
    }
    return false;
  };
  auto pick_family = [&](int exclude) {
    // Weighted by priors, with a bonus for families not yet tried and for those near the best.
    std::vector<double> w(weight);
    for (size_t f = 0; f < w.size(); ++f) {
      if (static_cast<int>(f) == exclude && w.size() > 1) w[f] = 0;
      if (family_tries[f] == 0) w[f] *= 2.0;
      if (best > 0 && family_best[f] >= 0.9 * best) w[f] *= 1.5;
    }
    std::discrete_distribution<int> dist(w.begin(), w.end());
    return dist(rng);
  };

  const int wanted = std::max(1, ctx.max_candidates);
  // Warm start: the best results of earlier runs (the store's memory of this operator in these
  // shape regimes) are re-measured first, so a run begins where the last ones left off. The top
  // `prior_count` are offered until each has been tried once; they then compete as elites.
  int priors = 0;
  for (const PriorResult& r : ctx.prior_results) {
    if (static_cast<int>(out->size()) >= wanted || priors >= opts.prior_count) break;
    auto it = family_index.find(r.family);
    if (it == family_index.end()) continue;
    ++priors;
    const int f = it->second;
    ParamAssignment params;  // only the genes the family has now
    for (const ParamSpec& p : ctx.families[f].manifest.params) {
      auto v = r.params.find(p.name);
      if (v != r.params.end()) params[p.name] = v->second;
    }
    if (spaces[f].Valid(params)) {
      std::string why = "warm start from " + r.source;
      if (is_taboo(f, params)) why += " (kept although it has a refuted setting: its own measurement decides)";
      accept(f, params, why, true);
    }
  }

  // First generation: every family not yet tried gets an instance, highest prior first.
  std::vector<int> order(ctx.families.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  for (int f : order) {
    if (static_cast<int>(out->size()) >= wanted) break;
    if (family_tries[f] == 0) fresh_instance(f, "first generation: family " + FamilyKey(op, ctx.families[f]));
  }

  const double move_rate = std::min(0.6, opts.base_move_rate + 0.05 * stagnation);
  auto evolve = [&] {
    int guard = 0;
    while (static_cast<int>(out->size()) < wanted && guard++ < wanted * 40) {
      double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      if (evaluated.empty() || u < move_rate) {
        int exclude = evaluated.empty() ? -1 : evaluated.front().family;
        int f = pick_family(exclude);
        fresh_instance(f, "architecture move to " + FamilyKey(op, ctx.families[f]) +
                              (stagnation ? " after " + std::to_string(stagnation) + " attempts without progress" : ""));
        continue;
      }
      // Half the time the best attempt is the parent (elitism); otherwise a tournament of two
      // among the elites, so that good runners-up keep being explored.
      std::uniform_int_distribution<size_t> pick(0, evaluated.size() - 1);
      const Evaluated& a = std::bernoulli_distribution(0.5)(rng) ? evaluated.front() : evaluated[pick(rng)];
      const Evaluated& b = evaluated[pick(rng)];
      const Evaluated& parent = a.attempt->geomean_speedup >= b.attempt->geomean_speedup ? a : b;
      const Evaluated& other = &parent == &a ? b : a;
      ParamAssignment child;
      if (u < move_rate + opts.crossover_rate && other.family == parent.family && &other != &parent &&
          spaces[parent.family].Crossover(parent.attempt->params, other.attempt->params, rng, &child)) {
        accept(parent.family, child,
               "crossover of attempts " + std::to_string(parent.attempt->iteration + 1) + " and " +
                   std::to_string(other.attempt->iteration + 1));
      } else if (spaces[parent.family].Mutate(parent.attempt->params, rng, &child)) {
        char speed[32];
        std::snprintf(speed, sizeof speed, "%.3fx", parent.attempt->geomean_speedup);
        accept(parent.family, child,
               "mutation of attempt " + std::to_string(parent.attempt->iteration + 1) + " (" + speed + "): " +
                   DescribeChange(parent.attempt->params, child));
      }
    }
  };
  evolve();
  // Refuted settings steer the search; they do not end it. A run whose own comparisons refuted a
  // setting in every region of a space (one comparison can refute one) would otherwise stop as
  // `exhausted` with most of the space unmeasured, its best instance perhaps among them: once
  // nothing without a refuted setting is left to draw, instances with one are drawn and measured.
  const bool any_taboo = std::any_of(taboo.begin(), taboo.end(), [](const auto& t) { return !t.empty(); });
  if (out->empty() && any_taboo) {
    honour_taboo = false;
    for (int f : order)
      if (static_cast<int>(out->size()) < wanted) fresh_instance(f, "fresh instance of " + FamilyKey(op, ctx.families[f]));
    evolve();
  }
  return true;
}

}  // namespace forgek
