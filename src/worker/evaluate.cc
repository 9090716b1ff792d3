// Golden vs candidate on every seed; then candidate and incumbent timed A B A B with a cold L2,
// rotated inputs, graph replay for short kernels, and one audited launch.
#include "evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "forgek/protocol/timing_stats.h"
#include "config_buffers.h"
#include "failed_step.h"
#include "graph_replay.h"
#include "torch_truth.h"

namespace forgek::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Fills the reply from a failed step: sticky errors are crashes, other driver errors launch errors.
EvaluateReply Failed(EvaluateReply reply, const GpuError& err) {
  reply.status = StatusOfFailure(err);
  reply.error = err.message;
  reply.failed_kernel = err.kernel;
  if (err.code != CUDA_SUCCESS) reply.cuda_error = cuda::ErrorName(err.code);
  return reply;
}

// One event pair per sample, reused.
struct EventPair {
  CUevent start = nullptr, end = nullptr;
};

// A kernel prepared for timing: an instance per input copy, optionally a graph of launches.
struct Timed {
  BoundKernel* kernel = nullptr;
  CUgraphExec graph = nullptr;
  std::vector<double> us, mhz;
};

class Timer {
 public:
  Timer(GpuContext* gpu, ConfigBuffers* buffers, const TimingPolicy& policy) : gpu_(gpu), buf_(buffers), policy_(policy) {}
  ~Timer() {
    const cuda::Driver& d = gpu_->d();
    for (Timed* t : {&cand_, &inc_})
      if (t->graph) d.cuGraphExecDestroy(t->graph);
    if (events_.start) d.cuEventDestroy(events_.start), d.cuEventDestroy(events_.end);
  }

  bool Run(BoundKernel* cand, BoundKernel* inc, EvaluateReply* reply, GpuError* err);

 private:
  bool EnqueueSample(Timed& t, int round, GpuError* err);
  bool Sample(Timed& t, int round, bool audit, EvaluateReply* reply, GpuError* err);
  bool Capture(Timed& t, GpuError* err);

  GpuContext* gpu_;
  ConfigBuffers* buf_;
  TimingPolicy policy_;
  Timed cand_, inc_;
  EventPair events_;
  int copies_ = 1;
  int reps_ = 1;  // launches per sample (graph replay when > 1)
};

bool Timer::Capture(Timed& t, GpuError* err) {
  return CaptureGraph(
      *gpu_,
      [&](GpuError* e) {
        for (int i = 0; i < reps_; ++i)
          if (!t.kernel->Enqueue(i % copies_, e)) return false;
        return true;
      },
      &t.graph, err);
}

bool Timer::EnqueueSample(Timed& t, int round, GpuError* err) {
  if (t.graph) return Ck(gpu_->d().cuGraphLaunch(t.graph, gpu_->stream()), "launch graph of " + t.kernel->label(), err);
  return t.kernel->Enqueue(round % copies_, err);
}

bool Timer::Sample(Timed& t, int round, bool audit, EvaluateReply* reply, GpuError* err) {
  const cuda::Driver& d = gpu_->d();
  CUstream s = gpu_->stream();
  if (audit && !buf_->ResetResults(-1, err)) return false;
  if (!gpu_->FlushL2(err)) return false;
  if (!Ck(d.cuEventRecord(events_.start, s), "record event", err)) return false;
  if (!EnqueueSample(t, round, err)) return false;
  if (!Ck(d.cuEventRecord(events_.end, s), "record event", err)) return false;
  err->kernel = t.kernel->label();
  if (!Ck(d.cuEventSynchronize(events_.end), t.kernel->label() + " (timed)", err)) return false;
  float ms = 0;
  if (!Ck(d.cuEventElapsedTime(&ms, events_.start, events_.end), "read events", err)) return false;
  t.us.push_back(ms * 1000.0 / reps_);
  if (audit) {
    // The last launch of the sample used copy (reps-1) % copies, or round % copies without a graph.
    int copy = t.graph ? (reps_ - 1) % copies_ : round % copies_;
    CorrectnessReport audit_report;
    audit_report.ok = true;
    if (!buf_->Check(copy, &audit_report, err)) return false;
    reply->audit_ok = audit_report.ok;
    if (!audit_report.ok)
      reply->audit_detail = fmt::format("timed sample {} (poisoned before, checked after): {}", t.us.size(),
                                        audit_report.detail);
  }
  double mhz = 0;
  std::string text;
  if (!cuda::MeasureSmClockMhz(s, &mhz, &text)) return gpu_->HelperFailed(text, err);
  t.mhz.push_back(mhz);
  return true;
}

bool Timer::Run(BoundKernel* cand, BoundKernel* inc, EvaluateReply* reply, GpuError* err) {
  const cuda::Driver& d = gpu_->d();
  cand_.kernel = cand;
  inc_.kernel = inc;
  std::vector<Timed*> kernels = {&cand_};
  if (inc) kernels.push_back(&inc_);

  // Rotated copies: enough that one sample's inputs cannot all sit in L2 (the flush already
  // evicts them; rotation matters for graph replay), bounded by a quarter of free memory.
  int64_t in_bytes = std::max<int64_t>(buf_->input_bytes(), 1);
  size_t free_mem = 0, total_mem = 0;
  d.cuMemGetInfo(&free_mem, &total_mem);
  int64_t want = (2 * gpu_->device().l2_bytes + in_bytes - 1) / in_bytes + 1;
  int64_t fit = static_cast<int64_t>(free_mem / 4) / in_bytes;
  copies_ = static_cast<int>(std::clamp<int64_t>(std::min(want, fit), 1, policy_.max_input_copies));
  if (!buf_->EnsureCopies(copies_, err)) return false;
  for (Timed* t : kernels) {
    while (t->kernel->instances() < copies_) {
      int idx;
      if (!t->kernel->AddInstance(buf_->CandidateBindings(t->kernel->instances()), &idx, err)) return false;
    }
  }
  if (!Ck(d.cuEventCreate(&events_.start, CU_EVENT_DEFAULT), "create event", err) ||
      !Ck(d.cuEventCreate(&events_.end, CU_EVENT_DEFAULT), "create event", err))
    return false;

  // Warm-up, which also estimates the time of one launch sequence.
  double est_us = 0;
  for (Timed* t : kernels) {
    for (int i = 0; i < std::max(policy_.stop.warmup, 1); ++i) {
      if (!Ck(d.cuEventRecord(events_.start, gpu_->stream()), "record event", err) ||
          !t->kernel->Enqueue(i % copies_, err) ||
          !Ck(d.cuEventRecord(events_.end, gpu_->stream()), "record event", err))
        return false;
      err->kernel = t->kernel->label();
      if (!Ck(d.cuEventSynchronize(events_.end), t->kernel->label() + " (warm-up)", err)) return false;
    }
    float ms = 0;
    d.cuEventElapsedTime(&ms, events_.start, events_.end);
    if (t == &cand_) est_us = ms * 1000.0;
  }
  bool has_inout = false;
  for (TensorBuffers& b : buf_->tensors()) has_inout |= b.spec.role == TensorRole::inout;
  if (est_us < policy_.graph_below_us) {
    // Each replay launches over the copies in turn; with inouts, each copy exactly once.
    reps_ = has_inout ? copies_ : LaunchesPerGraph(policy_, est_us, copies_);
    for (Timed* t : kernels)
      if (!Capture(*t, err)) return false;
  }
  reply->input_copies = copies_;
  reply->launches_per_sample = reps_;

  std::mt19937 rng(std::random_device{}());
  int audit_round = policy_.audit ? static_cast<int>(rng() % std::max(policy_.stop.min_samples, 1)) : -1;
  auto start = Clock::now();
  for (int round = 0;; ++round) {
    // A B, then B A: neither kernel always runs right after the other.
    std::vector<Timed*> order = kernels;
    if (round % 2 == 1) std::reverse(order.begin(), order.end());
    for (Timed* t : order)
      if (!Sample(*t, round, t == &cand_ && round == audit_round, reply, err)) return false;
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    double noise = Summarize(cand_.us, {}).rel_noise;
    if (inc) noise = std::max(noise, Summarize(inc_.us, {}).rel_noise);
    if (round >= audit_round && ShouldStop(policy_.stop, round + 1, elapsed, noise)) break;
  }
  reply->timed = true;
  reply->candidate = Summarize(cand_.us, cand_.mhz);
  if (inc) {
    reply->incumbent = Summarize(inc_.us, inc_.mhz);
    reply->paired = PairRounds(inc_.us, cand_.us);  // sample i of each is round i
  }
  return true;
}

}  // namespace

EvaluateReply Evaluate(GpuContext* gpu, const EvaluateCommand& cmd, const ProgressFn& progress, TorchGolden* torch) {
  EvaluateReply reply;
  const WireConfig& config = cmd.config;
  if (config.tolerance.check != "elementwise") {
    reply.status = ReplyStatus::unsupported;
    reply.error = "tolerance.check \"" + config.tolerance.check + "\" is not supported (only elementwise)";
    return reply;
  }
  GpuError err;
  ConfigBuffers buffers;
  BoundKernel golden, candidate, incumbent;
  int golden_instance = 0, cand_instance = 0;
  // Inputs are filled before the instances are added: a library call may plan from their values.
  const uint64_t first_seed = cmd.seeds.empty() ? 0 : cmd.seeds[0];
  // A PyTorch golden is no kernel: the helper computes its outputs from the same inputs.
  const bool torch_golden = !cmd.golden.torch_file.empty();
  if (torch_golden && !torch) {
    reply.status = ReplyStatus::unsupported;
    reply.error = "this worker runs no PyTorch golden";
    return reply;
  }
  if (!buffers.Allocate(gpu, config, &err) || (!torch_golden && !golden.Init(gpu, cmd.golden, config, &err)) ||
      !candidate.Init(gpu, cmd.candidate, config, &err) ||
      (!cmd.incumbent.empty() && !incumbent.Init(gpu, cmd.incumbent, config, &err)) ||
      !buffers.Fill(first_seed, &err) ||
      (!torch_golden && !golden.AddInstance(buffers.GoldenBindings(), &golden_instance, &err)) ||
      !candidate.AddInstance(buffers.CandidateBindings(0), &cand_instance, &err))
    return Failed(reply, err);

  reply.correctness.ok = true;
  for (size_t k = 0; k < cmd.seeds.size(); ++k) {
    std::string seed_name = fmt::format("seed {} of {}", k + 1, cmd.seeds.size());
    if (k > 0 && (!buffers.Fill(cmd.seeds[k], &err) || (!torch_golden && !golden.InputsChanged(&err)) ||
                  !candidate.InputsChanged(&err)))
      return Failed(reply, err);
    if (torch_golden) {
      // The helper may start (importing torch), build the Model and compute in float64 on a CPU.
      progress(cmd.golden.label + " (PyTorch) on " + config.name + ", " + seed_name, kTorchGoldenBudgetS);
      if (!buffers.ResetTruth(&err) ||
          !ComputeTorchTruth(gpu, &buffers, config, cmd.golden.torch_file, torch, &reply.golden, &err)) {
        err.kernel = cmd.golden.label;
        return Failed(reply, err);
      }
    } else {
      progress(cmd.golden.label + " on " + config.name + ", " + seed_name, 0);
      if (!buffers.ResetTruth(&err) || !golden.Enqueue(golden_instance, &err) || !gpu->Sync(golden.label(), &err))
        return Failed(reply, err);
    }
    progress(cmd.candidate.label + " on " + config.name + ", " + seed_name, 0);
    if (!buffers.ResetResults(0, &err) || !candidate.Enqueue(cand_instance, &err) ||
        !gpu->Sync(candidate.label(), &err))
      return Failed(reply, err);
    CorrectnessReport seed_report;
    seed_report.ok = true;
    if (!buffers.Check(0, &seed_report, &err)) return Failed(reply, err);
    reply.correctness.rel_l2 = std::max(reply.correctness.rel_l2, seed_report.rel_l2);
    reply.correctness.max_abs = std::max(reply.correctness.max_abs, seed_report.max_abs);
    reply.correctness.bad_elements += seed_report.bad_elements;
    if (!seed_report.ok) {
      reply.correctness.ok = false;
      reply.correctness.detail = seed_name + ": " + seed_report.detail;
      return reply;
    }
  }
  if (!cmd.time) return reply;
  if (!cmd.torch_yardstick.empty()) {
    if (!torch) {
      reply.torch.eager_error = reply.torch.compile_error = "this worker runs no torch helper";
    } else {
      // torch.compile compiles here on its first call at this config: seconds to minutes.
      progress("PyTorch eager and torch.compile on " + config.name, kTorchGoldenBudgetS);
      MeasureTorchYardstick(gpu, &buffers, config, cmd.torch_yardstick, torch, &reply.torch);
    }
  }

  // The golden's outputs of the last seed are the truth for the audit: copies duplicate copy 0.
  // Generous bound for the watchdog: warm-up, graph capture and the loop's own max time.
  progress("timing " + cmd.candidate.label + " on " + config.name, cmd.policy.stop.max_time_s * 2 + 5);
  Timer timer(gpu, &buffers, cmd.policy);
  if (!timer.Run(&candidate, cmd.incumbent.empty() ? nullptr : &incumbent, &reply, &err)) return Failed(reply, err);
  return reply;
}

}  // namespace forgek::worker
