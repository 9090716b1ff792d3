// Distillation: a decision's verdict, effect, confidence and settings derived from its evidence,
// and attempt outcomes turned into evidence.
#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "forgek/knowledge.h"
#include "forgek/verdict.h"
#include "knowledge/store_internal.h"

namespace forgek {

namespace {

// An expert kernel using a mechanism is a reason to try it, not proof that it helps here.
constexpr double kObservationWeight = 0.5;
constexpr double kAttemptWeight = 1.0;
// Speedups inside this band are noise: no evidence either way.
constexpr double kSupportSpeedup = 1.02;
constexpr double kContradictSpeedup = 0.98;

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

void DeriveDecision(const std::vector<EvidenceRecord>& evidence, DecisionRecord* d) {
  double support = 0, against = 0;
  std::vector<double> attempt_speedups;  // an attempt without a speedup counts as parity
  int attempts = 0, attempts_for = 0, attempts_against = 0, observations = 0;
  const EvidenceRecord* best_attempt = nullptr;
  const EvidenceRecord* newest_observation = nullptr;
  for (const auto& e : evidence) {
    bool attempt = e.kind == "attempt";
    double w = attempt ? kAttemptWeight : kObservationWeight;
    (e.supports ? support : against) += w;
    if (attempt) {
      ++attempts;
      (e.supports ? attempts_for : attempts_against) += 1;
      attempt_speedups.push_back(e.speedup > 0 ? e.speedup : 1.0);
      if (e.supports && (!best_attempt || e.speedup > best_attempt->speedup)) best_attempt = &e;
    } else {
      ++observations;
      if (e.supports && (!newest_observation || e.created_at > newest_observation->created_at)) newest_observation = &e;
    }
  }
  d->supporting = 0;
  d->contradicting = 0;
  for (const auto& e : evidence) (e.supports ? d->supporting : d->contradicting) += 1;
  d->confidence = support / (support + against + 1.0);
  d->effect = attempts > 0 ? Geomean(attempt_speedups) : 1.0;
  if (attempts == 0)
    d->verdict = "hypothesis";
  else if (attempts_for > attempts_against && support > against)
    d->verdict = "validated";
  else if (against > support)
    d->verdict = "refuted";
  else
    d->verdict = "hypothesis";
  if (best_attempt)
    d->settings_json = best_attempt->settings_json;
  else if (newest_observation)
    d->settings_json = newest_observation->settings_json;
  else
    d->settings_json = "{}";

  std::string text = d->scope.mechanism;
  if (d->settings_json != "{}" && !d->settings_json.empty()) text += " " + d->settings_json;
  text += " for " + d->scope.category + " on " + d->scope.arch + " (" + d->scope.regime + " shapes): ";
  if (d->verdict == "validated")
    text += "helps, " + Fixed(d->effect, 2) + "x over " + std::to_string(attempts) + " attempt(s)";
  else if (d->verdict == "refuted")
    text += "hurts, " + Fixed(d->effect, 2) + "x over " + std::to_string(attempts) + " attempt(s)";
  else if (attempts > 0)
    text += "unclear, " + Fixed(d->effect, 2) + "x over " + std::to_string(attempts) + " attempt(s)";
  else
    text += "used by the expert reference (" + std::to_string(observations) + " observation(s)), untested";
  text += "; confidence " + Fixed(d->confidence, 2);
  d->text = text;
}

bool RecordAttemptEvidence(Store& store, const AttemptEvidenceInput& in, std::vector<DecisionRecord>* updated,
                           std::string* err) {
  if (updated) updated->clear();
  if (!in.op || !in.result) {
    if (err) *err = "RecordAttemptEvidence needs the operator and the evaluation result";
    return false;
  }
  // Only timed outcomes say anything about speed.
  if (!OutcomeTimed(in.result->outcome)) return true;

  // Group the configs by regime: a mechanism may help large shapes and hurt skinny ones.
  struct Group {
    std::vector<double> speedups;
    std::vector<std::string> configs;
  };
  std::map<std::string, Group> groups;
  for (const auto& c : in.result->configs) {
    if (c.speedup <= 0) continue;
    Group& g = groups[ShapeRegime(*in.op, c.config)];
    g.speedups.push_back(c.speedup);
    g.configs.push_back(c.config);
  }
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [k, v] : in.params) settings[k] = v;
  nlohmann::json deltas = nlohmann::json::object();
  for (const auto& [metric, value] : in.candidate_metrics) {
    auto it = in.incumbent_metrics.find(metric);
    if (it != in.incumbent_metrics.end()) deltas[metric] = value - it->second;
  }

  return store.Transaction(
      [&](std::string* e) {
        for (const auto& [regime, g] : groups) {
          double speedup = Geomean(g.speedups);
          if (speedup < kSupportSpeedup && speedup > kContradictSpeedup) continue;
          std::string configs;
          for (const auto& c : g.configs) configs += (configs.empty() ? "" : ",") + c;
          for (const auto& mech : in.mechanisms) {
            EvidenceRecord ev;
            ev.kind = "attempt";
            ev.source = "attempt " + in.attempt_id + " of run " + in.run_id + " on " + in.op->name + " [" + configs + "]";
            ev.operator_name = in.op->name;
            ev.config = g.configs.size() == 1 ? g.configs[0] : "";
            ev.candidate_hash = in.candidate_hash;
            ev.settings_json = settings.dump();
            ev.supports = speedup >= kSupportSpeedup;
            ev.speedup = speedup;
            ev.metric_deltas_json = deltas.dump();
            ev.device = in.device;
            DecisionRecord d;
            if (!store.AddEvidence({in.arch, in.op->category, regime, mech}, ev, &d, e)) return false;
            if (updated) updated->push_back(d);
          }
        }
        return true;
      },
      err);
}

}  // namespace forgek
