// `forgek regress`: which seal of each operator a nightly checks, and each config of it classified
// against the expert reference measured now (the printers are in regress_report.cc).
#include "forgek/seal/regress.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "forgek/seal/seal.h"

namespace forgek {

const char* RegressClassName(RegressClass c) {
  switch (c) {
    case RegressClass::same: return "same";
    case RegressClass::faster: return "faster";
    case RegressClass::slower: return "slower";
    case RegressClass::wrong: return "wrong";
    case RegressClass::unmeasured: return "unmeasured";
  }
  return "same";
}

bool RegressSealResult::Regressed() const {
  if (status == Status::error) return true;
  if (status == Status::skipped) return false;
  if (!beyond_suite_failures.empty()) return true;
  return std::any_of(configs.begin(), configs.end(), [](const RegressConfig& c) {
    return c.klass != RegressClass::same && c.klass != RegressClass::faster;
  });
}

int RegressReport::Regressions() const {
  return static_cast<int>(std::count_if(seals.begin(), seals.end(), [](const RegressSealResult& s) {
    return s.Regressed();
  }));
}

RegressConfig ClassifyRegressConfig(const VerifyConfig& c, double threshold) {
  RegressConfig r;
  r.config = c.config;
  r.correct = c.correct;
  r.now_us = c.now_us;
  r.expert_us = c.expert_us;
  r.sealed_us = c.sealed_us;
  r.speedup = c.vs_expert.speedup;
  r.noise = c.vs_expert.noise;
  r.drift = c.drift;
  if (!c.correct) {
    r.klass = RegressClass::wrong;
  } else if (!c.vs_expert.timed) {
    // Correct but not timed (a median is missing): nothing shows the seal holds its place here.
    r.klass = RegressClass::unmeasured;
    r.message = "correct, but not timed";
  } else {
    switch (Classify(c.vs_expert.speedup, c.vs_expert.noise, threshold)) {
      case Direction::faster: r.klass = RegressClass::faster; break;
      case Direction::slower: r.klass = RegressClass::slower; break;
      case Direction::same: r.klass = RegressClass::same; break;
    }
  }
  return r;
}

namespace {

// Why a seal is not measured on this machine, or "" when it is.
std::string SkipReason(const SealRecord& seal, const RegressScope& scope) {
  if (!seal.device.empty() && seal.device != scope.device)
    return "sealed on " + seal.device + ", this GPU is " + scope.device;
  if (scope.across_versions) return "";
  if (!seal.driver.empty() && !scope.driver.empty() && seal.driver != scope.driver)
    return "sealed with driver " + seal.driver + ", this machine has " + scope.driver +
           " (--across-versions checks it anyway)";
  if (!seal.toolchain.empty() && !scope.toolchain.empty() && seal.toolchain != scope.toolchain)
    return "sealed with " + seal.toolchain + ", this machine has " + scope.toolchain +
           " (--across-versions checks it anyway)";
  return "";
}

}  // namespace

bool SelectRegressTargets(Store& store, const RegressScope& scope, std::vector<RegressTarget>* out, std::string* err) {
  out->clear();
  std::vector<SealRecord> seals;  // newest first
  if (!store.ListSeals("", scope.arch, &seals, err)) return false;
  std::map<std::string, std::vector<const SealRecord*>> by_operator;
  std::vector<std::string> order;  // operators in the order of their newest seal
  for (const SealRecord& s : seals) {
    if (!by_operator.count(s.operator_name)) order.push_back(s.operator_name);
    by_operator[s.operator_name].push_back(&s);
  }
  if (!scope.operators.empty()) order = scope.operators;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  for (const std::string& name : order) {
    RegressTarget t;
    t.operator_name = name;
    auto it = by_operator.find(name);
    if (it == by_operator.end()) {
      t.skip_reason = "no seal of " + name + " on " + scope.arch + " in the store";
      out->push_back(std::move(t));
      continue;
    }
    // The newest seal timed on this GPU model; else the newest of all, reported as skipped.
    const SealRecord* pick = it->second.front();
    for (const SealRecord* s : it->second) {
      if (s->device.empty() || s->device == scope.device) {
        pick = s;
        break;
      }
    }
    t.seal = *pick;
    t.skip_reason = SkipReason(*pick, scope);
    out->push_back(std::move(t));
  }
  return true;
}

RegressSealResult RegressSeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                              const SealRecord& seal, double threshold) {
  RegressSealResult r;
  r.operator_name = op.name;
  r.seal_id = seal.id;
  const auto start = std::chrono::steady_clock::now();
  SealMeasurement m = MeasureSeal(evaluator, store, compiler, op, seal);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!m.error.empty()) {
    r.status = RegressSealResult::Status::error;
    r.reason = m.error;
    return r;
  }
  for (const VerifyConfig& c : m.verdict.configs) r.configs.push_back(ClassifyRegressConfig(c, threshold));
  // A config the measurement never reached (it stopped at a wrong result, a crash or a timeout):
  // wrong when the stop names it, else unmeasured, with the stop as its message.
  std::set<std::string> seen;
  for (const RegressConfig& c : r.configs) seen.insert(c.config);
  const std::string stop = std::string(OutcomeName(m.result.outcome)) + ": " + m.result.detail;
  for (const ConfigSpec& c : op.configs) {
    if (seen.count(c.name)) continue;
    RegressConfig missing;
    missing.config = c.name;
    const bool named = m.result.detail.find("config " + c.name + ":") != std::string::npos;
    missing.klass = m.result.outcome == Outcome::wrong && named ? RegressClass::wrong : RegressClass::unmeasured;
    missing.message = "not measured: " + stop;
    r.configs.push_back(std::move(missing));
  }
  if (!m.verdict.holds) r.reason = m.verdict.reason;
  r.beyond_suite = m.beyond_suite;
  r.beyond_suite_failures = m.problems;
  return r;
}

}  // namespace forgek
