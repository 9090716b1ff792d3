// Distillation: a decision's verdict, effect, interval, confidence and text derived from its evidence.
// Only controlled comparisons (kinds "comparison" and "ablation") say whether a setting helps; expert
// observations make a mechanism worth trying and nothing more.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "forgek/knowledge/knowledge.h"
#include "forgek/verdict/verdict.h"
#include "independence.h"

namespace forgek {

namespace {

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

bool IsComparison(const EvidenceRecord& e) { return e.kind == "comparison" || e.kind == "ablation"; }

}  // namespace

void DeriveDecision(const std::vector<EvidenceRecord>& evidence, DecisionRecord* d) {
  // The effect is the geometric mean of the comparisons' speedups. Its noise is the larger of the
  // propagated noise of that mean (sqrt(sum noise^2) / n, as verdict.h does for a geomean) and the
  // standard error of the speedups themselves: comparisons that disagree widen the interval. Both
  // assume independent comparisons, so only those that share no measurement count
  // (IndependentComparisons); the others stay on record as evidence and count for nothing.
  std::vector<double> speedups, noises;
  int observations = 0, recorded = 0;
  std::set<std::string> operators;
  d->supporting = 0;
  d->contradicting = 0;
  for (const auto& e : evidence) {
    if (!e.operator_name.empty()) operators.insert(e.operator_name);
    if (IsComparison(e) && e.speedup > 0) {
      ++recorded;
    } else if (e.kind == "observation") {
      ++observations;
      (e.supports ? d->supporting : d->contradicting) += 1;
    }
  }
  for (size_t i : IndependentComparisons(evidence)) {
    const EvidenceRecord& e = evidence[i];
    speedups.push_back(e.speedup);
    noises.push_back(e.noise);
    (e.speedup >= 1 ? d->supporting : d->contradicting) += 1;
  }
  d->operators.assign(operators.begin(), operators.end());
  const int n = static_cast<int>(speedups.size());
  d->comparisons = n;
  d->effect = n > 0 ? Geomean(speedups) : 1.0;  // no comparison: no effect
  double noise = 0;
  if (n > 0) {
    double sum_sq = 0;
    for (double v : noises) sum_sq += v * v;
    noise = std::sqrt(sum_sq) / n;
    if (n >= 2) {
      const double mean = std::log(d->effect);  // the mean log speedup
      double var = 0;
      for (double s : speedups) var += (std::log(s) - mean) * (std::log(s) - mean);
      noise = std::max(noise, std::sqrt(var / (n - 1) / n));
    }
  }
  d->effect_lo = n > 0 ? d->effect * (1 - noise) : 1.0;
  d->effect_hi = n > 0 ? d->effect * (1 + noise) : 1.0;
  Direction dir = n > 0 ? Classify(d->effect, noise) : Direction::same;
  if (n > 0 && dir == Direction::faster)
    d->verdict = DecisionVerdict::validated;
  else if (n > 0 && dir == Direction::slower)
    d->verdict = DecisionVerdict::refuted;
  else
    d->verdict = DecisionVerdict::hypothesis;
  // Confidence: how many independent comparisons agree with the verdict; observations add little.
  d->confidence = n > 0 && d->verdict != DecisionVerdict::hypothesis ? static_cast<double>(n) / (n + 1.0)
                                                      : std::min(0.3, 0.1 * observations);
  if (d->settings_json.empty()) d->settings_json = "{}";
  if (d->scope.setting.empty()) {
    // A whole mechanism: its settings are those seen in the newest observation, for a person.
    const EvidenceRecord* newest = nullptr;
    for (const auto& e : evidence)
      if (e.kind == "observation" && (!newest || e.created_at > newest->created_at)) newest = &e;
    d->settings_json = newest ? newest->settings_json : "{}";
  } else {
    for (const auto& e : evidence)
      if (IsComparison(e) && !e.settings_json.empty()) {
        d->settings_json = e.settings_json;
        break;
      }
  }

  std::string text = d->scope.mechanism;
  if (!d->scope.setting.empty()) text += " " + d->scope.setting;
  text += " for " + d->scope.category + " on " + d->scope.arch + " (" + d->scope.regime + " shapes): ";
  std::string interval = Fixed(d->effect, 2) + "x [" + Fixed(d->effect_lo, 2) + ", " + Fixed(d->effect_hi, 2) +
                         "] over " + std::to_string(n) + (n == 1 ? " comparison" : " comparisons");
  if (recorded > n)
    interval += " (of " + std::to_string(recorded) + " recorded; those sharing a measurement count once)";
  if (d->verdict == DecisionVerdict::validated)
    text += "helps " + interval;
  else if (d->verdict == DecisionVerdict::refuted)
    text += "hurts " + interval;
  else if (n > 0)
    text += "no effect beyond noise, " + interval;
  else if (observations > 0)
    text += "seen in an expert kernel (" + std::to_string(observations) + " observation(s)), untested here";
  else
    text += "no evidence that isolates it (only uncontrolled records, e.g. imported from an older store)";
  d->text = text;
}

}  // namespace forgek
