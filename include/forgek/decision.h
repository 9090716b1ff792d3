// A decision of the knowledge store as retrieval hands it on: what knowledge gives and agents read.
#pragma once

#include <string>

namespace forgek {

// A piece of retrieved knowledge, already ranked, for the agent's priors and prompts.
struct RetrievedDecision {
  std::string mechanism;      // mechanism id, e.g. "wgmma"
  std::string settings;       // JSON text of settings, e.g. {"BM":128,"STAGES":4}
  std::string verdict;        // hypothesis | validated | refuted
  double effect = 0;          // measured or expected speedup factor (1.10 = +10%)
  double confidence = 0;      // 0..1
  std::string text;           // one line for a prompt
};

}  // namespace forgek
