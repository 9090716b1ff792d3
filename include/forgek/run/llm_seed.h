// `forgek ops import ... --agent llm`: the seed asked of the LLM agent instead of given with --seed.
#pragma once

#include <string>

#include "forgek/agent/llm.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

struct LlmSeedOptions {
  LlmOptions llm;
  int replies = 3;            // replies asked for at most: the first, then one per failure
  std::string arch = "sm90";  // the compile check's target
  std::string cache_dir, pch_dir;  // the compiler's (CompilerOptions); "" for none
};

// A seed for `op` (an imported operator: its golden, a PyTorch problem, is shown to the model as
// what to compute; there is no incumbent): the model's reply is parsed and checked against the
// operator as any proposal, then compiled with NVRTC at its params' first values (the instance
// the reference runs); a reply that does not compile goes back to the model with the compiler's
// errors, up to `replies` replies. True with the reply's candidate file in *source; false with
// why (the model could not be asked, or the last reply's errors). Correctness is checked where a
// GPU is: `forgek eval` / `forgek run` against the golden.
bool AskLlmSeed(const OperatorSpec& op, const LlmSeedOptions& opts, std::string* source, std::string* err);

}  // namespace forgek
