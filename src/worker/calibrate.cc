// `forgek worker --calibrate` and the calibrate request: measured copy and tensor-core peaks, and
// the launch floor.
#include <cuda_runtime.h>

#include <vector>

#include <spdlog/spdlog.h>

#include "forgek/cuda/calibrate_gemm.h"
#include "forgek/protocol/timing_stats.h"
#include "forgek/worker/gpu_context.h"
#include "graph_replay.h"
#include "forgek/worker/worker.h"

namespace forgek::worker {
namespace {

// The time of one empty launch, measured the way Timer (evaluate.cc) times a kernel shorter than
// TimingPolicy::graph_below_us: a CUDA graph of enough launches to last graph_target_us, replayed
// after an L2 flush between two events, divided by its launches; the median of the samples. A
// candidate timed this way cannot come in under it, whatever its work.
bool MeasureLaunchFloorUs(GpuContext& gpu, double* floor_us, std::string* err) {
  const cuda::Driver& d = gpu.d();
  CUstream s = gpu.stream();
  GpuError gerr;
  CUevent start = nullptr, end = nullptr;
  CUgraphExec graph = nullptr;
  auto fail = [&](const std::string& why) {
    *err = "launch floor: " + why;
    return false;
  };
  auto cleanup = [&] {
    if (graph) d.cuGraphExecDestroy(graph);
    if (start) d.cuEventDestroy(start);
    if (end) d.cuEventDestroy(end);
  };
  auto measure = [&]() -> bool {
    if (!Ck(d.cuEventCreate(&start, CU_EVENT_DEFAULT), "create event", &gerr) ||
        !Ck(d.cuEventCreate(&end, CU_EVENT_DEFAULT), "create event", &gerr))
      return fail(gerr.message);
    // Warm-up, and the time of one launch, which sizes the graph as the timer does.
    std::string text;
    if (!cuda::LaunchEmpty(3, s, &text)) return fail(text);
    if (!gpu.FlushL2(&gerr) || !Ck(d.cuEventRecord(start, s), "record event", &gerr)) return fail(gerr.message);
    if (!cuda::LaunchEmpty(1, s, &text)) return fail(text);
    if (!Ck(d.cuEventRecord(end, s), "record event", &gerr) || !Ck(d.cuEventSynchronize(end), "sync", &gerr))
      return fail(gerr.message);
    float ms = 0;
    d.cuEventElapsedTime(&ms, start, end);
    const int reps = LaunchesPerGraph(TimingPolicy{}, ms * 1000.0, 1);
    auto enqueue = [&](GpuError* e) {
      if (cuda::LaunchEmpty(reps, s, &text)) return true;
      e->message = text;
      return false;
    };
    if (!CaptureGraph(gpu, enqueue, &graph, &gerr)) return fail(gerr.message);

    constexpr int kSamples = 30;
    std::vector<double> us;
    for (int i = 0; i < kSamples; ++i) {
      if (!gpu.FlushL2(&gerr) || !Ck(d.cuEventRecord(start, s), "record event", &gerr) ||
          !Ck(d.cuGraphLaunch(graph, s), "launch graph", &gerr) || !Ck(d.cuEventRecord(end, s), "record event", &gerr) ||
          !Ck(d.cuEventSynchronize(end), "sync", &gerr) || !Ck(d.cuEventElapsedTime(&ms, start, end), "read events", &gerr))
        return fail(gerr.message);
      us.push_back(ms * 1000.0 / reps);
    }
    *floor_us = Summarize(us, {}).median_us;
    return true;
  };
  const bool ok = measure();
  cleanup();
  return ok;
}

}  // namespace

bool Calibrate(DevicePeaks* out, std::string* err) {
  GpuContext gpu;
  GpuError gerr;
  if (!gpu.Init(&gerr)) return *err = gerr.message, false;
  DevicePeaks p;
  p.device = gpu.device().name;
  p.source = "calibrated";
  // 1 GiB each way: far beyond L2, long enough that launch overhead vanishes.
  if (!cuda::MeasureCopyGbps(1ll << 30, gpu.stream(), &p.copy_kernel_gbps, &p.memcpy_gbps, err)) return false;
  struct Entry {
    cuda::GemmPeakType type;
    double* tflops;
  };
  for (Entry e : {Entry{cuda::GemmPeakType::bf16, &p.bf16_tflops}, Entry{cuda::GemmPeakType::fp16, &p.fp16_tflops},
                  Entry{cuda::GemmPeakType::fp8_e4m3, &p.fp8_tflops}, Entry{cuda::GemmPeakType::tf32, &p.tf32_tflops}}) {
    std::string why;
    if (!cuda::MeasureGemmTflops(e.type, 8192, gpu.stream(), e.tflops, &why)) {
      // A missing type leaves its peak at 0 (no compute bound for it) rather than failing all.
      spdlog::warn("calibrate {}: {}", cuda::GemmPeakTypeName(e.type), why);
      *e.tflops = 0;
    }
  }
  if (!MeasureLaunchFloorUs(gpu, &p.launch_floor_us, err)) return false;
  *out = p;
  return true;
}

}  // namespace forgek::worker
