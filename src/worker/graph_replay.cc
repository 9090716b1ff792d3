// CUDA graph replay as the worker times short kernels (worker/graph_replay.h).
#include "graph_replay.h"

#include <algorithm>

namespace forgek::worker {

int LaunchesPerGraph(const TimingPolicy& policy, double one_launch_us, int at_least) {
  return std::clamp(static_cast<int>(policy.graph_target_us / std::max(one_launch_us, 0.5)), at_least, 1000);
}

bool CaptureGraph(GpuContext& gpu, const std::function<bool(GpuError*)>& enqueue, CUgraphExec* out, GpuError* err) {
  const cuda::Driver& d = gpu.d();
  CUstream s = gpu.stream();
  if (!Ck(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED), "begin graph capture", err)) return false;
  const bool ok = enqueue(err);
  CUgraph graph = nullptr;
  CUresult end = d.cuStreamEndCapture(s, &graph);
  if (!ok) {
    if (graph) d.cuGraphDestroy(graph);
    return false;
  }
  if (!Ck(end, "end graph capture", err)) return false;
  CUresult inst = d.cuGraphInstantiateWithFlags(out, graph, 0);
  d.cuGraphDestroy(graph);
  return Ck(inst, "instantiate graph", err);
}

}  // namespace forgek::worker
