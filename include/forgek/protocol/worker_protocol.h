// The supervisor <-> GPU worker protocol: JSON lines over the worker's stdin and stdout.
//
// Every request is one line, an object with an integer "id" and a "type":
//   {"id":1,"type":"hello"}                     -> probe: driver version and devices
//   {"id":2,"type":"calibrate"}                 -> measured peaks (DevicePeaks)
//   {"id":3,"type":"prepare"}                   -> opens the CUDA context ahead of the first evaluate
//   {"id":4,"type":"evaluate", ...}             -> EvaluateCommand: golden vs candidate on fresh
//                                                  seeds, then interleaved timing vs the incumbent
//   {"id":5,"type":"profile", ...}              -> ProfileCommand: time one kernel on one config, then
//                                                  CUPTI activity records and range-profiler metrics
//   {"id":6,"type":"shutdown"}                  -> the worker replies and exits 0
// The worker answers each request with exactly one reply line
//   {"id":N,"type":"reply","ok":true, ...fields of the reply...}
//   {"id":N,"type":"reply","ok":false,"error":"...", ...}
// and, before any step that runs GPU work of unknown length, a progress line
//   {"id":N,"type":"progress","step":"candidate seed 2","budget_s":0}
// The supervisor's watchdog allows each step its own deadline plus `budget_s` (the worker's own
// bound on that step, e.g. the timing loop's max time) and kills the worker when a step overruns.
// A reply with "status":"crash" means the CUDA context is dead (sticky error): the worker exits
// after sending it. Logs go to stderr, never stdout.
//
// Kernels travel inside requests as WireKernel: a library id, or a cubin (base64)
// with its launches already resolved for the config by the supervisor (ResolveCandidate), so
// the worker needs no operator or manifest parsing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/candidate.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/peaks.h"

namespace forgek {

inline constexpr int kWorkerProtocolVersion = 1;

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string cc;  // "9.0"
  int sms = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int max_sm_clock_mhz = 0;  // the attribute: the maximum, not the current clock
  int memory_clock_mhz = 0;
  int memory_bus_bits = 0;
};

// `forgek worker --probe` and the hello reply.
struct ProbeResult {
  bool ok = false;
  std::string error;  // "no NVIDIA driver: libcuda.so.1 not found"
  int driver_version = 0;
  std::vector<DeviceInfo> devices;
};

// One tensor of one config, shapes evaluated.
struct WireTensor {
  std::string name;
  TensorRole role = TensorRole::input;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // outermost first
  InitSpec init;               // hi_expr already evaluated into hi
  int64_t elements() const;
  int64_t bytes() const;
};

// One config of one operator, everything the worker needs to allocate and fill it.
struct WireConfig {
  std::string op;    // operator name, for messages
  std::string name;  // config name
  Bindings values;   // the config's params (library references plan with them)
  std::vector<WireTensor> tensors;
  std::vector<ScalarSpec> scalars;
  Tolerance tolerance;
};

// A kernel under test bound to one config.
struct WireKernel {
  std::string label;       // "golden", "candidate", "reference", ...
  std::string library;     // a library reference id, or ""
  std::string cubin_b64;   // the cubin itself, base64, or ""
  ResolvedCandidate launch;  // for cubins: workspaces, tensor maps and launches for this config
  // A golden only: the absolute path of a PyTorch problem file (docs/importing.md), computed by
  // the worker's torch helper at the config's values instead of a kernel, or "".
  std::string torch_file;

  bool empty() const { return library.empty() && cubin_b64.empty() && torch_file.empty(); }
};

// When the timing loop stops: at least min_samples and min_time_s, then as soon as the relative
// noise is at most max_noise, and in any case at max_samples or max_time_s.
struct StopRule {
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 300;
  double min_time_s = 0.02;
  double max_time_s = 1.0;
  double max_noise = 0.02;
};

struct TimingPolicy {
  StopRule stop;
  double graph_below_us = 20;    // kernels faster than this are timed by CUDA graph replay
  double graph_target_us = 200;  // a replayed graph holds enough launches to last about this long
  int max_input_copies = 32;     // rotated input copies (bounded by memory, see the worker)
  bool audit = true;             // poison and check one randomly chosen timed launch
};

struct EvaluateCommand {
  WireConfig config;
  WireKernel golden, candidate;
  WireKernel incumbent;       // empty(): correctness only
  std::vector<uint64_t> seeds;  // fresh per evaluation; at least one
  bool time = true;
  TimingPolicy policy;
  // PyTorch timed eagerly and under torch.compile too, before the candidate's timing: the
  // yardstick EvalRequest::torch_yardstick names ("" none); only with `time`.
  std::string torch_yardstick;
};

// How an evaluate or profile request ended, the reply's "status" (spelled as the enumerator).
//   ok: ran to the end (correctness may still have failed); launch_error: a launch was refused
//   (non-sticky, the worker goes on); crash: sticky CUDA error, the worker exits after replying;
//   unsupported: the config asks for something this worker cannot do; error: anything else.
enum class ReplyStatus { ok, launch_error, crash, unsupported, error };
const char* ReplyStatusName(ReplyStatus s);

struct EvaluateReply {
  ReplyStatus status = ReplyStatus::ok;
  std::string error;        // what went wrong, for every status but ok
  std::string cuda_error;   // cuGetErrorName of the failing call, when there was one
  std::string failed_kernel;  // label of the kernel that failed
  CorrectnessReport correctness;
  bool timed = false;
  TimingStats candidate, incumbent;
  PairedRatio paired;       // each round's incumbent time over the candidate's (with an incumbent)
  bool audit_ok = true;
  std::string audit_detail;
  int input_copies = 0;     // how many rotated copies the timing used
  int launches_per_sample = 0;  // > 1 when timed by graph replay
  GoldenTiming golden;      // a PyTorch golden's cost (seeds == 0 for a kernel golden)
  TorchYardstick torch;     // asked with torch_yardstick; else empty
};

// Profiles one kernel on one config: a short timing loop, then (kept apart from it) one call
// with CUPTI activity tracing, then one call under the range profiler.
struct ProfileCommand {
  WireConfig config;
  WireKernel kernel;
  std::vector<std::string> metrics;  // empty: RangeProfiler::DefaultMetrics()
  uint64_t seed = 1;
  int warmup = 3;
  int samples = 20;  // timed calls (cold L2 each); time_us is their median
};

struct ProfileReply {
  ReplyStatus status = ReplyStatus::ok;
  std::string error;
  std::string cuda_error;
  std::vector<KernelLaunchRecord> launches;  // every launch of one call, in order
  std::map<std::string, double> metrics;     // the whole call's (kernels aggregated)
  std::vector<std::map<std::string, double>> kernel_metrics;  // per kernel, in launch order
  std::string metrics_error;  // CUPTI could not give metrics (or records); the rest still holds
  double time_us = 0;
  TimingStats timing;
};

// Line framing. DecodeRequestLine / DecodeReplyLine accept one line (without the newline) and
// check the envelope: a JSON object with an integer "id" and a string "type".
std::string EncodeLine(const nlohmann::json& message);
bool DecodeMessageLine(const std::string& line, nlohmann::json* out, std::string* err);

// A member of a worker message, or `fallback` when it is absent or of another type: a reply from a
// broken worker must not throw in the supervisor.
bool BoolField(const nlohmann::json& message, const char* key, bool fallback);
double NumberField(const nlohmann::json& message, const char* key, double fallback);
std::string StringField(const nlohmann::json& message, const char* key, const std::string& fallback);

// Each struct <-> JSON. FromJson names the member that is missing, of the wrong type or out of range
// by its path from the root ("golden.launch.launches[0].grid: expected three integers (x, y, z)").
nlohmann::json ToJson(const DeviceInfo& v);
nlohmann::json ToJson(const ProbeResult& v);
nlohmann::json ToJson(const WireConfig& v);
nlohmann::json ToJson(const WireKernel& v);
nlohmann::json ToJson(const TimingPolicy& v);
nlohmann::json ToJson(const EvaluateCommand& v);
nlohmann::json ToJson(const EvaluateReply& v);
nlohmann::json ToJson(const GoldenTiming& v);
nlohmann::json ToJson(const TorchYardstick& v);
nlohmann::json ToJson(const TimingStats& v);
nlohmann::json ToJson(const CorrectnessReport& v);
nlohmann::json ToJson(const KernelLaunchRecord& v);
nlohmann::json ToJson(const ProfileCommand& v);
nlohmann::json ToJson(const ProfileReply& v);
bool FromJson(const nlohmann::json& j, ProbeResult* out, std::string* err);
bool FromJson(const nlohmann::json& j, WireConfig* out, std::string* err);
bool FromJson(const nlohmann::json& j, WireKernel* out, std::string* err);
bool FromJson(const nlohmann::json& j, TimingPolicy* out, std::string* err);
bool FromJson(const nlohmann::json& j, EvaluateCommand* out, std::string* err);
bool FromJson(const nlohmann::json& j, EvaluateReply* out, std::string* err);
bool FromJson(const nlohmann::json& j, GoldenTiming* out, std::string* err);
bool FromJson(const nlohmann::json& j, TimingStats* out, std::string* err);
bool FromJson(const nlohmann::json& j, CorrectnessReport* out, std::string* err);
bool FromJson(const nlohmann::json& j, KernelLaunchRecord* out, std::string* err);
bool FromJson(const nlohmann::json& j, ProfileCommand* out, std::string* err);
bool FromJson(const nlohmann::json& j, ProfileReply* out, std::string* err);

std::string Base64Encode(const std::string& bytes);
bool Base64Decode(const std::string& text, std::string* bytes);

}  // namespace forgek
