// The spellings of why a run stopped.
#include "forgek/core/stop_reason.h"

namespace forgek {

const char* StopReasonName(StopReason r) {
  switch (r) {
    case StopReason::none: return "";
    case StopReason::iterations: return "iterations";
    case StopReason::time: return "time";
    case StopReason::patience: return "patience";
    case StopReason::max_cost: return "max-cost";
    case StopReason::max_tokens: return "max-tokens";
    case StopReason::interrupted: return "interrupted";
    case StopReason::exhausted: return "exhausted";
    case StopReason::agent_failed: return "agent";
    case StopReason::error: return "error";
  }
  return "error";
}

}  // namespace forgek
