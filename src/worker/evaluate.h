// The worker's evaluate request: correctness on fresh seeds, then interleaved cold-L2 timing.
#pragma once

#include <functional>
#include <string>

#include "forgek/worker/gpu_context.h"

namespace forgek::worker {

// Announces the next step and the worker's own bound on its length (see worker_protocol.h).
using ProgressFn = std::function<void(const std::string& step, double budget_s)>;

EvaluateReply Evaluate(GpuContext* gpu, const EvaluateCommand& cmd, const ProgressFn& progress);

}  // namespace forgek::worker
