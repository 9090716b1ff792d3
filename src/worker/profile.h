// The worker's profile request: timing, then CUPTI activity records, then range-profiler metrics.
#pragma once

#include <nlohmann/json.hpp>

#include "evaluate.h"
#include "forgek/worker/gpu_context.h"

namespace forgek::worker {

// Profiles one kernel on one config. The timing loop runs first and alone; tracing and counter
// collection each get their own call afterwards, so neither perturbs the time. A CUPTI failure
// leaves the timing (and whatever CUPTI did give) in the reply, with metrics_error saying why.
ProfileReply Profile(GpuContext* gpu, const ProfileCommand& cmd, const ProgressFn& progress);

}  // namespace forgek::worker
