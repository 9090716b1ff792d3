// The worker's evaluate request: correctness on fresh seeds, then interleaved cold-L2 timing.
#pragma once

#include <functional>
#include <string>

#include "forgek/worker/gpu_context.h"
#include "torch_golden.h"

namespace forgek::worker {

// Announces the next step and the worker's own bound on its length (see worker_protocol.h).
using ProgressFn = std::function<void(const std::string& step, double budget_s)>;

// The worker's own bound on one seed of a PyTorch golden (starting the helper, building the Model,
// a float64 computation on a CPU): generous, since a large GEMM in float64 on a small CPU takes minutes.
inline constexpr double kTorchGoldenBudgetS = 900;

// `torch` runs a golden given as a PyTorch problem (the worker's one helper); null: none is run.
EvaluateReply Evaluate(GpuContext* gpu, const EvaluateCommand& cmd, const ProgressFn& progress, TorchGolden* torch);

}  // namespace forgek::worker
