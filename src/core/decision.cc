// The spellings of a decision's verdict.
#include "forgek/core/decision.h"

namespace forgek {

const char* DecisionVerdictName(DecisionVerdict v) {
  switch (v) {
    case DecisionVerdict::hypothesis: return "hypothesis";
    case DecisionVerdict::validated: return "validated";
    case DecisionVerdict::refuted: return "refuted";
  }
  return "hypothesis";
}

bool ParseDecisionVerdict(const std::string& text, DecisionVerdict* out) {
  for (DecisionVerdict v : {DecisionVerdict::hypothesis, DecisionVerdict::validated, DecisionVerdict::refuted}) {
    if (text == DecisionVerdictName(v)) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace forgek
