// The GPU side of a command: a worker-backed evaluator with the device's calibrated peaks.
#pragma once

#include <memory>
#include <string>

#include "context.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"
#include "forgek/eval/worker_client.h"

namespace forgek::cli {

// Forwards to a WorkerEvaluator and names the device and driver it runs on.
class SessionEvaluator : public Evaluator {
 public:
  explicit SessionEvaluator(WorkerEvaluatorOptions opts);
  // Starts the worker and asks it for the device; false with the reason when there is none.
  bool Probe(std::string* err);
  EvalResult Evaluate(const EvalRequest& req) override { return worker_.Evaluate(req); }
  bool Profile(const ProfileRequest& req, std::vector<KernelProfile>* out, std::string* err) override {
    return worker_.Profile(req, out, err);
  }
  std::string DeviceName() const override;
  std::string DriverVersion() const override;
  int64_t SmCount() const override { return worker_.SmCount(); }
  WorkerEvaluator& worker() { return worker_; }
  const ProbeResult& probe() const { return probe_; }

 private:
  WorkerEvaluator worker_;
  ProbeResult probe_;
};

struct GpuSession {
  std::unique_ptr<SessionEvaluator> evaluator;
  DevicePeaks peaks;
};

// Probes the GPU through a worker (the supervisor opens no CUDA context), takes the device's
// calibrated peaks from the store (calibrating once and storing them when it has none), and
// starts the evaluator. Without a GPU: false with a one-line reason.
bool OpenGpuSession(const Context& ctx, Store* store, GpuSession* out, std::string* err);

// One session per GPU named by `gpus_spec` (`--gpus all|N|LIST`, see forgek/gpu_list.h): each
// worker sees only its GPU (CUDA_VISIBLE_DEVICES), so timings never mix devices.
bool OpenGpuSessions(const Context& ctx, Store* store, const std::string& gpus_spec, std::vector<GpuSession>* out,
                     std::string* err);

// `forgek seal verify`: re-checks a seal on this GPU against the expert reference and its sealed
// times. exit_code 0 when it holds, 3 when it is wrong or slower beyond noise, 1 on failure.
struct VerifyOutcome {
  int exit_code = 1;
  std::string text, json;
};
VerifyOutcome VerifySealOnGpu(const Context& ctx, Store& store, const OperatorSpec& op, const SealRecord& seal);

}  // namespace forgek::cli
