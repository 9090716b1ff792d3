// CUPTI in the worker: kernel activity records of every launch, and range-profiler metrics.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "forgek/core/profile.h"

namespace forgek {

// Records every kernel launched while enabled (library kernels included) through CUPTI's
// activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). One collector per process: CUPTI's
// buffer callbacks are process-wide. Keep it off during timing runs: tracing adds overhead.
class ActivityCollector {
 public:
  ActivityCollector();
  ~ActivityCollector();
  ActivityCollector(const ActivityCollector&) = delete;
  ActivityCollector& operator=(const ActivityCollector&) = delete;

  // Starts recording. Fails when another collector is active or CUPTI refuses.
  bool Enable(std::string* err);
  // Waits for the device, flushes CUPTI's buffers and appends the records completed since the
  // last Take to the returned list, in start-time order. Recording continues.
  bool Take(std::vector<KernelLaunchRecord>* out, std::string* err);
  // Stops recording (idempotent); records not taken yet are dropped.
  void Disable();

 private:
  bool enabled_ = false;
};

// A sequence of GPU work to profile: enqueues the work and returns true, or fills the error.
// It may be called several times (once per replay pass), so it must be repeatable.
using ProfiledWork = std::function<bool(std::string*)>;

// Metric name -> value, for one kernel or for a whole piece of work.
using MetricValues = std::map<std::string, double>;

// How the range profiler cuts the work into ranges.
enum class ProfileRange {
  // Auto range, kernel replay: every kernel is its own range and CUPTI replays each kernel as
  // many passes as the metrics need (saving and restoring memory), so `work` runs once. The
  // "elapsed" percentages are those of each kernel alone. The default.
  per_kernel,
  // User range, user replay: one range around the whole work, which runs once per pass. The
  // "elapsed" percentages then include the launch gaps inside the range: on a 24 us cuBLAS
  // GEMM, sm__throughput read 9% this way and 74% per kernel (docs/profiling.md).
  whole_work,
};

// Collects hardware metrics with the CUPTI 13 Range Profiler API (cupti_range_profiler.h +
// cupti_profiler_host.h; the older session API is deprecated in CUDA 13).
class RangeProfiler {
 public:
  // The metrics forgek reads by default; every name is valid on GH100 (docs/profiling.md).
  static const std::vector<std::string>& DefaultMetrics();

  RangeProfiler();
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Binds to the current CUDA context (the primary context of the current device after
  // cudaSetDevice / cudaFree(0)) and builds the configuration for `metrics`. A metric name
  // the GPU does not know fails here, named in the error.
  bool Init(const std::vector<std::string>& metrics, std::string* err,
            ProfileRange range = ProfileRange::per_kernel);

  // Runs `work` (once, or once per pass for whole_work), synchronising after it, and evaluates
  // every metric. `metrics` receives the whole work's values (per_kernel: the kernels combined
  // with AggregateKernelMetrics); `per_kernel`, when given, one map per kernel in launch order
  // (whole_work: the one range).
  bool Profile(const ProfiledWork& work, MetricValues* metrics, std::string* err,
               std::vector<MetricValues>* per_kernel = nullptr);

  // Replay passes the configured metrics need (valid after Init).
  size_t passes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Combines per-kernel metrics into the whole work's (pure, no CUDA): counters ending in ".sum"
// are added; every other metric (percentages, averages, ratios) is averaged, weighted by each
// kernel's gpu__time_duration.sum where every kernel has it, else plainly. A metric missing
// from some kernels is combined over those that have it.
MetricValues AggregateKernelMetrics(const std::vector<MetricValues>& kernels);

}  // namespace forgek
