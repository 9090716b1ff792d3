// `forgek regress`: the nightly re-check of every operator's newest seal on this GPU, each config
// classified against the expert reference, reported as text, JSON and JUnit and kept in the store.
#pragma once

#include <string>
#include <vector>

#include "forgek/compile/compile.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

// A config of a seal measured now, interleaved against the expert reference in one worker.
// wrong: incorrect now; slower / faster / same: the verdict module's Classify of the seal against
// the expert, with `threshold` as the floor under the noise (forgek/verdict.h); unmeasured: the
// evaluation stopped before it (a crash, a timeout, another config wrong), or it was not timed.
enum class RegressClass { same, faster, slower, wrong, unmeasured };
const char* RegressClassName(RegressClass c);

struct RegressConfig {
  std::string config;
  RegressClass klass = RegressClass::same;
  bool correct = false;
  double now_us = 0, expert_us = 0, sealed_us = 0;
  double speedup = 0, noise = 0;  // the seal against the expert now (> 1: the seal is faster)
  double drift = 0;               // now / sealed - 1: reported, never judged (another day, another process)
  std::string message;            // why it is wrong or unmeasured, when the measurement says
};
RegressConfig ClassifyRegressConfig(const VerifyConfig& c, double threshold);

// One seal re-checked. `checked`: measured (its configs filled); `skipped`: built for another GPU
// model, driver or toolkit, or the operator has no seal (nothing measured, `reason` says why);
// `error`: it could not be measured (no longer compiles, its operator is gone, ...).
struct RegressSealResult {
  enum class Status { checked, skipped, error };
  Status status = Status::checked;
  std::string operator_name, seal_id, reason;
  std::vector<RegressConfig> configs;
  // The checks beyond the suite's configs (a dispatch's fallback, shapes drawn within the
  // operator's ranges): one line each, and those that failed.
  std::vector<std::string> beyond_suite, beyond_suite_failures;
  double wall_s = 0;
  // Wrong, slower or unmeasured on a config, failed beyond the suite, or could not be measured.
  bool Regressed() const;
};

struct RegressReport {
  std::string check_id, started_at;
  std::string device, driver, toolchain, arch;
  double threshold = 0;
  std::vector<RegressSealResult> seals;
  int Regressions() const;
};

// Which seal of each operator a nightly checks. `operators` empty: every operator with a seal of
// `arch`. Per operator the newest seal timed on `device`; an operator with seals of other GPU
// models only gives its newest one as skipped, and so does a seal whose driver or toolkit differs
// from this machine's unless `across_versions`; an operator named in `operators` without any seal
// is skipped too ("no seal").
struct RegressTarget {
  std::string operator_name;
  SealRecord seal;           // empty id when the operator has no seal
  std::string skip_reason;   // "" to measure
};
struct RegressScope {
  std::string arch, device, driver, toolchain;
  std::vector<std::string> operators;
  bool across_versions = false;
};
bool SelectRegressTargets(Store& store, const RegressScope& scope, std::vector<RegressTarget>* out,
                          std::string* err);

// Re-checks one seal through `evaluator` (MeasureSeal) and classifies each config.
RegressSealResult RegressSeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                              const SealRecord& seal, double threshold);

// The report for a person, for a program, and for a CI system (JUnit XML: a <testsuites> root, a
// <testsuite> per operator, a <testcase> per config with its times as properties, <failure> for
// slower or wrong, <error> for a seal that could not be measured, <skipped> for one not checked).
std::string RegressText(const RegressReport& report);
std::string RegressJson(const RegressReport& report);
std::string RegressJunit(const RegressReport& report);

// The report as rows of the store's nightly history (one per config, one per seal skipped, in
// error or checked beyond the suite).
std::vector<SealCheckRecord> RegressHistoryRows(const RegressReport& report);

}  // namespace forgek
