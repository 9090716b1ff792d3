// CUDA graph replay as the worker times short kernels: how many launches a graph holds, and its capture.
#pragma once

#include <functional>

#include "forgek/worker/gpu_context.h"

namespace forgek::worker {

// Launches per replayed graph for a launch sequence of `one_launch_us`: enough to last
// `policy.graph_target_us`, at least `at_least`, at most 1000.
int LaunchesPerGraph(const TimingPolicy& policy, double one_launch_us, int at_least);

// Captures what `enqueue` puts on the context's stream into an instantiated graph (`*out`). False
// with `err` filled when enqueue or the capture fails; nothing is left behind then.
bool CaptureGraph(GpuContext& gpu, const std::function<bool(GpuError*)>& enqueue, CUgraphExec* out, GpuError* err);

}  // namespace forgek::worker
