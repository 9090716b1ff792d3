// Why a run stopped: one enumerator per cause, one spelling each (the JSON summary's "stop_reason").
#pragma once

#include <string>

namespace forgek {

// none: still running. iterations, time, patience: the run's own budget (--iterations, --time,
// --patience). max_cost, max_tokens: the agent's budget (--max-cost, --max-tokens): a normal end,
// like time. interrupted: Ctrl-C or SIGTERM. exhausted: the agent had nothing new to offer.
// agent_failed: the agent could not go on (its words are the run's stop detail). error: the run
// itself failed.
enum class StopReason { none, iterations, time, patience, max_cost, max_tokens, interrupted, exhausted, agent_failed, error };

// "iterations", "time", "patience", "max-cost", "max-tokens", "interrupted", "exhausted", "agent",
// "error"; "" for none.
const char* StopReasonName(StopReason r);

}  // namespace forgek
