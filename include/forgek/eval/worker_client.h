// The supervisor side of the GPU worker: spawn, request/reply with a watchdog, respawn; and the
// Evaluator that runs EvalRequests through it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/evaluation.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek {

// `forgek worker` of this very executable.
std::vector<std::string> DefaultWorkerCommand();

// One worker process. Not thread-safe: one request at a time.
class WorkerClient {
 public:
  explicit WorkerClient(std::vector<std::string> command = DefaultWorkerCommand());
  ~WorkerClient();  // asks the worker to shut down, then kills it if it lingers
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  enum class Status { ok, timeout, died, protocol_error, spawn_error };
  struct Reply {
    Status status = Status::ok;
    nlohmann::json body;  // the reply line (status ok)
    std::string detail;   // what happened otherwise: deadline, exit status or signal, stderr tail
  };

  // Sends {"id":..,"type":type, ...fields} and waits for the matching reply. Each step (the wait
  // for the first line, then each progress line) gets `deadline_s` plus the budget_s the worker
  // announced for it; when a step overruns, the worker is killed (SIGKILL) and reaped:
  // Status::timeout. A worker that exits or closes its stdout: Status::died. A worker that is not
  // running is (re)spawned first. `bound_s` > 0 also bounds the whole call, every step together
  // (the caller's own limit, e.g. what --time leaves): past it the worker is killed the same way,
  // Status::timeout with the bound named.
  Reply Call(const std::string& type, const nlohmann::json& fields, double deadline_s, double bound_s = 0);

  bool running() const { return pid_ > 0; }
  int spawns() const { return spawns_; }
  // The last lines the worker wrote to stderr (kept for crash reports; also logged at debug level).
  std::string StderrTail() const;
  // SIGKILL and reap; a no-op when not running. Returns a description of how it ended.
  std::string Kill();

 private:
  bool Spawn(std::string* err);
  bool ReadLine(double timeout_s, std::string* line, bool* timed_out);
  std::string Reap(bool kill_first);
  void CloseChannels();

  std::vector<std::string> command_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1, stderr_fd_ = -1;
  std::string buffer_;
  int64_t next_id_ = 1;
  int spawns_ = 0;
  struct StderrLog;
  std::shared_ptr<StderrLog> stderr_log_;
  std::thread stderr_thread_;
};

// What a worker call that did not end in an "ok" reply means, in the store's outcome vocabulary:
// the one mapping of WorkerClient::Status and of the worker's reply "status" onto Outcome. A call
// that overran its deadline is a timeout; one whose worker died, broke the protocol or never
// started is a crash; a reply `crash` (dead CUDA context) is a crash; any other status but `ok` is a
// launch_error. Returns false when the call succeeded with status `ok`: correctness and time decide.
bool WorkerFailure(WorkerClient::Status call, ReplyStatus reply_status, Outcome* out);

struct WorkerEvaluatorOptions {
  std::vector<std::string> command = DefaultWorkerCommand();
  DevicePeaks peaks;          // calibrated peaks; when !valid() the worker calibrates once
  DevicePeaks datasheet;      // the device's datasheet peaks (knowledge/hardware), for the datasheet SOL %
  TimingPolicy policy;
  double hello_deadline_s = 60;      // start-up and probe
  double calibrate_deadline_s = 120;
  double profile_deadline_s = 60;    // per config: timing, one traced call, counter replay
};

// The Evaluator backed by a GPU worker process: per config, correctness of the candidate against
// the golden on fresh seeds, then interleaved timing against the incumbent, the audit and the
// speed-of-light check; crashes and timeouts end the evaluation and the worker is respawned for
// the next one.
class WorkerEvaluator : public Evaluator {
 public:
  explicit WorkerEvaluator(WorkerEvaluatorOptions opts = {});
  EvalResult Evaluate(const EvalRequest& req) override;
  // Per config: a timing loop, CUPTI activity records and range-profiler metrics of the kernel
  // (see ProfileCommand). Metrics CUPTI could not give are left empty with a warning.
  bool Profile(const ProfileRequest& req, std::vector<KernelProfile>* out, std::string* err) override;

  // The device the worker reports (hello), starting it when needed.
  bool Probe(ProbeResult* out, std::string* err);
  // The SM count of the worker's device (its device 0): what every launch this evaluator resolves
  // binds to num_sms. Probes once when nothing has probed yet; false when the worker reports no device.
  bool DeviceSms(int64_t* out, std::string* err);
  int64_t SmCount() const override { return device_sms_; }
  // The peaks used for SOL: the options' or SetPeaks', else measured by the worker once.
  bool Peaks(DevicePeaks* out, std::string* err);
  // Peaks known after construction (e.g. the store's calibration of the probed device).
  void SetPeaks(const DevicePeaks& peaks) { peaks_ = peaks; }
  void SetDatasheetPeaks(const DevicePeaks& peaks) { opts_.datasheet = peaks; }
  WorkerClient& client() { return client_; }

 private:
  WorkerEvaluatorOptions opts_;
  WorkerClient client_;
  DevicePeaks peaks_;
  // From the first probe. A respawned worker runs the same command, so on the same device.
  int64_t device_sms_ = 0;
};

// Builds the worker's description of one config of `op` (shapes and init bounds evaluated).
bool MakeWireConfig(const OperatorSpec& op, const ConfigSpec& config, WireConfig* out, std::string* err);
// Binds a kernel under test to one config (ResolveCandidate for compiled kernels) on a device of
// `num_sms` multiprocessors: the launches it carries are for that device only.
bool MakeWireKernel(const KernelUnderTest& k, const OperatorSpec& op, const ConfigSpec& config, int64_t num_sms,
                    WireKernel* out, std::string* err);

}  // namespace forgek
