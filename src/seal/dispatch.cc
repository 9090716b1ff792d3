// Assembling a dispatch from a run's measurements and confirming it per config.
#include "forgek/seal/dispatch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace forgek {
namespace {

std::string Fmt3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

const ConfigResult* Find(const EvalResult& r, const std::string& config) {
  for (const ConfigResult& c : r.configs)
    if (c.config == config) return &c;
  return nullptr;
}

}  // namespace

std::string DirectionWords(Direction d) {
  switch (d) {
    case Direction::faster: return "faster beyond noise";
    case Direction::slower: return "slower beyond noise";
    case Direction::same: break;
  }
  return "the same within noise";
}

std::vector<int> Dispatch::Kernels() const {
  std::set<int> used;
  for (const DispatchChoice& c : configs)
    if (c.candidate >= 0) used.insert(c.candidate);
  if (fallback >= 0) used.insert(fallback);
  return {used.begin(), used.end()};
}

bool Dispatch::AnyCandidate() const {
  return std::any_of(configs.begin(), configs.end(), [](const DispatchChoice& c) { return c.candidate >= 0; });
}

bool Dispatch::Mixed() const {
  std::set<int> served;
  for (const DispatchChoice& c : configs) served.insert(c.candidate);
  return served.size() > 1;
}

Dispatch AssembleDispatch(const std::vector<std::string>& configs, const std::vector<DispatchCandidate>& candidates,
                          double min_effect) {
  Dispatch d;
  for (const std::string& config : configs) {
    DispatchChoice choice;
    choice.config = config;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const EvalResult& r = candidates[i].result;
      if (!OutcomeTimed(r.outcome)) continue;
      const ConfigResult* c = Find(r, config);
      if (!c || !c->correctness.ok) continue;
      TimeComparison t = CompareConfig(*c, min_effect);
      if (!t.timed) continue;
      if (choice.best_candidate < 0 || t.speedup > choice.best.speedup) {
        choice.best = t;
        choice.best_candidate = static_cast<int>(i);
      }
    }
    if (choice.best_candidate < 0) {
      choice.reason = "incumbent: no candidate measured correct here";
    } else {
      const std::string& label = candidates[choice.best_candidate].label;
      if (choice.best.direction == Direction::faster) {
        choice.candidate = choice.best_candidate;
        choice.reason = label + ": " + Fmt3(choice.best.speedup) + "x, " + DirectionWords(choice.best.direction);
      } else {
        choice.reason = "incumbent: best " + Fmt3(choice.best.speedup) + "x (" + label + "), " +
                        DirectionWords(choice.best.direction);
      }
    }
    d.configs.push_back(std::move(choice));
  }
  // The fallback serves shapes outside the table: the best geomean among candidates measured on
  // every config and slower on none; the incumbent when none is.
  double best = 1.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const EvalResult& r = candidates[i].result;
    if (!OutcomeTimed(r.outcome) || r.configs.size() < configs.size()) continue;
    GeomeanComparison g = CompareOnConfigs(r.configs, min_effect);
    if (g.direction != Direction::faster || g.speedup <= best) continue;
    best = g.speedup;
    d.fallback = static_cast<int>(i);
  }
  d.fallback_reason = d.fallback < 0 ? "incumbent: no candidate was faster on the geomean and slower nowhere"
                                     : candidates[d.fallback].label + ": best geomean " + Fmt3(best) + "x, slower nowhere";
  return d;
}

EvalResult MergeResults(const std::vector<EvalResult>& parts, const std::vector<std::string>& order) {
  EvalResult merged;
  for (const EvalResult& p : parts) {
    merged.wall_s += p.wall_s;
    if (!OutcomeTimed(p.outcome) && merged.detail.empty()) {
      merged.outcome = p.outcome;
      merged.detail = p.detail;
    }
  }
  for (const std::string& config : order)
    for (const EvalResult& p : parts)
      if (const ConfigResult* c = Find(p, config)) {
        merged.configs.push_back(*c);
        break;
      }
  if (!merged.detail.empty()) return merged;
  JudgeTimed(&merged);  // as the evaluator ends one evaluation of every config
  return merged;
}

EvalResult ConfirmDispatch(const Dispatch& dispatch, const MeasurePart& measure) {
  std::map<int, std::vector<std::string>> groups;  // kernel -> the configs it serves
  std::vector<std::string> order;
  for (const DispatchChoice& c : dispatch.configs) {
    groups[c.candidate].push_back(c.config);
    order.push_back(c.config);
  }
  std::vector<EvalResult> parts;
  for (const auto& [kernel, configs] : groups) parts.push_back(measure(kernel, configs));
  return MergeResults(parts, order);
}

}  // namespace forgek
