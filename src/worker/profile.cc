// Profile one kernel on one config: cold-L2 timing loop, one traced call, one counted call.
#include "profile.h"

#include <fmt/format.h>

#include "forgek/protocol/timing_stats.h"
#include "forgek/cuda/cupti.h"
#include "config_buffers.h"
#include "failed_step.h"

namespace forgek::worker {
namespace {

ProfileReply Failed(ProfileReply reply, const GpuError& err) {
  reply.status = StatusOfFailure(err);
  reply.error = err.kernel.empty() ? err.message : err.kernel + ": " + err.message;
  if (err.code != CUDA_SUCCESS) reply.cuda_error = cuda::ErrorName(err.code);
  return reply;
}

// Median of `samples` calls, each after an L2 flush, between a pair of events.
bool TimeCalls(GpuContext* gpu, BoundKernel* kernel, int samples, TimingStats* out, GpuError* err) {
  const cuda::Driver& d = gpu->d();
  CUevent start = nullptr, end = nullptr;
  if (!Ck(d.cuEventCreate(&start, CU_EVENT_DEFAULT), "create event", err)) return false;
  if (!Ck(d.cuEventCreate(&end, CU_EVENT_DEFAULT), "create event", err)) return d.cuEventDestroy(start), false;
  std::vector<double> us;
  bool ok = true;
  for (int i = 0; i < samples && ok; ++i) {
    float ms = 0;
    err->kernel = kernel->label();
    ok = gpu->FlushL2(err) && Ck(d.cuEventRecord(start, gpu->stream()), "record event", err) &&
         kernel->Enqueue(0, err) && Ck(d.cuEventRecord(end, gpu->stream()), "record event", err) &&
         Ck(d.cuEventSynchronize(end), kernel->label() + " (timed)", err) &&
         Ck(d.cuEventElapsedTime(&ms, start, end), "read events", err);
    if (ok) us.push_back(ms * 1000.0);
  }
  d.cuEventDestroy(start);
  d.cuEventDestroy(end);
  if (ok) *out = Summarize(us, {});
  return ok;
}

// Appends `what` to the reply's metrics_error.
void NoteCuptiFailure(ProfileReply* reply, const std::string& what) {
  reply->metrics_error += (reply->metrics_error.empty() ? "" : "; ") + what;
}

}  // namespace

ProfileReply Profile(GpuContext* gpu, const ProfileCommand& cmd, const ProgressFn& progress) {
  ProfileReply reply;
  const WireConfig& config = cmd.config;
  const std::string where = cmd.kernel.label + " on " + config.name;
  GpuError err;
  ConfigBuffers buffers;
  BoundKernel kernel;
  int instance = 0;
  if (!buffers.Allocate(gpu, config, &err) || !kernel.Init(gpu, cmd.kernel, config, &err) ||
      !buffers.Fill(cmd.seed, &err) || !kernel.AddInstance(buffers.CandidateBindings(0), &instance, &err) ||
      !buffers.ResetResults(0, &err))
    return Failed(reply, err);

  progress("warm-up and timing of " + where, 30);
  for (int i = 0; i < cmd.warmup; ++i)
    if (!kernel.Enqueue(instance, &err)) return Failed(reply, err);
  if (!gpu->Sync(kernel.label() + " (warm-up)", &err)) return Failed(reply, err);
  if (!TimeCalls(gpu, &kernel, cmd.samples, &reply.timing, &err)) return Failed(reply, err);
  reply.time_us = reply.timing.median_us;

  // One call traced: every launch of it, library kernels included.
  progress("activity records of " + where, 10);
  {
    ActivityCollector collector;
    std::string cerr;
    if (!collector.Enable(&cerr)) {
      NoteCuptiFailure(&reply, "activity: " + cerr);
    } else {
      if (!kernel.Enqueue(instance, &err) || !gpu->Sync(kernel.label() + " (traced)", &err))
        return Failed(reply, err);
      if (!collector.Take(&reply.launches, &cerr)) NoteCuptiFailure(&reply, "activity: " + cerr);
      collector.Disable();
    }
  }

  // One call under the range profiler, every kernel its own range (kernel replay).
  progress("metrics of " + where, 60);
  RangeProfiler profiler;
  std::string perr;
  const std::vector<std::string>& metrics = cmd.metrics.empty() ? RangeProfiler::DefaultMetrics() : cmd.metrics;
  GpuError work_err;
  ProfiledWork work = [&](std::string* e) {
    if (kernel.Enqueue(instance, &work_err)) return true;
    *e = work_err.message;
    return false;
  };
  if (!profiler.Init(metrics, &perr, ProfileRange::per_kernel) ||
      !profiler.Profile(work, &reply.metrics, &perr, &reply.kernel_metrics)) {
    // A kernel that broke the context under replay is a crash, not a metrics problem.
    if (work_err.sticky()) return Failed(reply, work_err);
    GpuError sync_err;
    if (!gpu->Sync(kernel.label() + " (profiled)", &sync_err) && sync_err.sticky()) return Failed(reply, sync_err);
    NoteCuptiFailure(&reply, "metrics: " + perr);
    reply.metrics.clear();
    reply.kernel_metrics.clear();
  }
  return reply;
}

}  // namespace forgek::worker
