// Building the agent a run asks for (builtin, llm, replay) and recording its LLM exchanges in the store.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "forgek/agent/agent.h"
#include "forgek/agent/llm.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// Records LLM exchanges in the store under the run once the run has an id (earlier ones wait).
class StoreExchangeRecorder : public ExchangeRecorder {
 public:
  explicit StoreExchangeRecorder(Store* store) : store_(store) {}
  void SetRun(const std::string& run_id);
  void Record(const LlmExchange& x) override;

 private:
  void Write(const LlmExchange& x);
  Store* store_;
  std::string run_id_;
  std::vector<LlmExchange> pending_;
  int iteration_ = 0;
};

struct AgentChoice {
  std::string kind = "builtin";  // builtin | llm | replay
  uint64_t seed = 1;             // builtin: the search's seed
  LlmOptions llm;                // llm and replay (replay takes the recorded model when none is given)
  std::string replay_from;       // replay: the run whose recorded exchanges are replayed
};

// The agent `choice` names; nullptr with the reason when it cannot be built (an llm agent without
// its key, a replay source with no exchanges in `store`, ...). The caller checks the options a
// person gives (--model for llm, --from for replay) before.
std::unique_ptr<Agent> MakeAgent(const AgentChoice& choice, Store* store, ExchangeRecorder* recorder,
                                 std::string* err);

}  // namespace forgek
