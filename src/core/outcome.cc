// Names of evaluation outcomes, as stored and printed.
#include "forgek/core/evaluation.h"

namespace forgek {

namespace {
constexpr std::pair<Outcome, const char*> kOutcomes[] = {
    {Outcome::compile_error, "compile_error"}, {Outcome::launch_error, "launch_error"}, {Outcome::crash, "crash"},
    {Outcome::timeout, "timeout"}, {Outcome::wrong, "wrong"}, {Outcome::slower, "slower"},
    {Outcome::same, "same"}, {Outcome::faster, "faster"}, {Outcome::correct, "correct"},
    {Outcome::compiled, "compiled"}};
}  // namespace

const char* OutcomeName(Outcome o) {
  for (const auto& [outcome, name] : kOutcomes)
    if (outcome == o) return name;
  return "crash";
}

bool ParseOutcome(const std::string& s, Outcome* out) {
  for (const auto& [outcome, name] : kOutcomes)
    if (s == name) return *out = outcome, true;
  return false;
}

bool OutcomeTimed(Outcome o) { return o == Outcome::slower || o == Outcome::same || o == Outcome::faster; }

int64_t DeviceSmCountOr(const Evaluator* evaluator, const std::string& arch) {
  const int64_t sms = evaluator ? evaluator->SmCount() : 0;
  return sms > 0 ? sms : NominalSmCount(arch);
}

}  // namespace forgek
