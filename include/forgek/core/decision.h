// A decision of the knowledge store as retrieval hands it on: what knowledge gives and agents read.
#pragma once

#include <string>

namespace forgek {

// What the evidence says of a decision: hypothesis (expected, not yet measured here), validated
// (controlled comparisons show it helps), refuted (they show it does not). Stored and printed as
// the enumerator's name.
enum class DecisionVerdict { hypothesis, validated, refuted };
const char* DecisionVerdictName(DecisionVerdict v);
// False for a spelling that is none of the three.
bool ParseDecisionVerdict(const std::string& text, DecisionVerdict* out);

// A piece of retrieved knowledge, already ranked, for the agent's priors and prompts.
struct RetrievedDecision {
  std::string mechanism;      // mechanism id, e.g. "wgmma"
  std::string settings;       // JSON text of settings, e.g. {"BM":128,"STAGES":4}
  DecisionVerdict verdict = DecisionVerdict::hypothesis;
  double effect = 0;          // measured or expected speedup factor (1.10 = +10%)
  double confidence = 0;      // 0..1
  std::string text;           // one line for a prompt
  std::string setting;        // named setting of the mechanism's controlling params ("stages=4"), or ""
  std::string regime;         // shape regime it was learned in ("large", "any", ...)
  std::string basis;          // why it applies: "same operator", "same category", "same arch"
  bool transferred = false;   // learned on other operators only: a prior to confirm, not a fact here
  std::string id;             // decision id in the store
};

}  // namespace forgek
