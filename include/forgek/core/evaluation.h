// What evaluating a kernel on the GPU yields, and the interface the run loop evaluates through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/profile.h"

namespace forgek {

// Every evaluated candidate ends in exactly one of these (docs/seal-format.md, "Outcomes"). The
// three timed ones (slower, same, faster) come from the verdict rule (forgek/verdict.h); `correct`
// is a correct result that was not compared with an incumbent; `compiled` a candidate that was
// compiled and not run (--compile-only): neither is evidence about speed.
enum class Outcome { compile_error, launch_error, crash, timeout, wrong, slower, same, faster, correct, compiled };
const char* OutcomeName(Outcome o);
bool ParseOutcome(const std::string& s, Outcome* out);
// True for the outcomes of a correct candidate timed against an incumbent: slower, same, faster.
bool OutcomeTimed(Outcome o);

// A kernel the worker can run: a library reference, or a compiled candidate with its params.
struct KernelUnderTest {
  std::string label;             // for reports: "reference", "seal:ab12", "candidate 17"
  std::string library;           // library id ("cublas.gemm_bf16"), or "" for a compiled candidate
  std::string cubin;             // binary image when library is ""
  CandidateManifest manifest;
  ParamAssignment params;
  // A PyTorch golden (a KernelBench problem or a FlashInfer-Bench definition): the problem file's
  // absolute path, computed by the worker's torch helper; library and cubin are then "".
  std::string torch_file;
};

// Timing statistics of one kernel on one config (microseconds).
struct TimingStats {
  double median_us = 0, mean_us = 0, min_us = 0, p10_us = 0, p90_us = 0;
  double rel_noise = 0;   // (p90 - p10) / 2 / median, the spread reported with every time
  int samples = 0;
  double sm_clock_mhz = 0;  // median SM clock during the samples
};

// The two kernels of a timed comparison alternate round by round (A B, then B A): each round's
// incumbent time over the candidate's, summarized. Both sides of a round share its clock and power
// state, so the spread of these ratios is the noise of the speedup itself, which the two kernels'
// own spreads added as if independent overstate when the clocks drift (docs/seal-format.md).
struct PairedRatio {
  double median = 0;     // median of incumbent_us[i] / candidate_us[i] over the rounds
  double rel_noise = 0;  // (p90 - p10) / 2 / median of those ratios
  int pairs = 0;         // rounds with both times; 0: not timed together
};

struct CorrectnessReport {
  bool ok = false;
  double rel_l2 = 0, max_abs = 0;   // worst over outputs and seeds
  int64_t bad_elements = 0;         // elements outside tolerance, NaN/Inf or never written
  std::string detail;               // first mismatches with indices and values, or the NaN story
};

// What a PyTorch golden cost the worker, summed over the seeds it ran: the wall time of each
// (inputs to the host, the helper's exchange, outputs back), the device copies in it and the
// helper's own compute time; pipes and framing are the rest. seeds == 0 for a kernel golden.
struct GoldenTiming {
  int seeds = 0;
  double total_ms = 0, copy_ms = 0, compute_ms = 0;
  std::string device;     // where torch computed: "cpu" or "cuda"
  std::string transport;  // how the tensors crossed: "cuda_ipc" (mapped where they lie) or "pipes"
};

// PyTorch's own time on a config whose golden is a PyTorch problem: the yardstick people quote
// (docs/importing.md, "PyTorch as the yardstick"). The problem in its native dtypes on the worker's
// GPU, called eagerly and under torch.compile, interleaved, cold L2, one event pair per call; the
// samples summarised as the worker's own. A mode that did not run says why and has no samples.
struct TorchYardstick {
  TimingStats eager, compiled;
  std::string eager_error, compile_error;
  std::string device, torch_version;  // where it ran ("cuda"), torch.__version__
  bool measured() const { return eager.samples > 0 || compiled.samples > 0; }
  bool asked() const { return measured() || !eager_error.empty() || !compile_error.empty(); }
};

struct ConfigResult {
  std::string config;
  CorrectnessReport correctness;
  GoldenTiming golden;   // a PyTorch golden's cost on this config (seeds == 0 for a CUDA golden)
  TorchYardstick torch;  // asked with EvalRequest::torch_yardstick; else empty
  TimingStats candidate, incumbent;
  PairedRatio paired;   // the rounds of the two, paired (pairs == 0: not timed together)
  double speedup = 0;   // incumbent median / candidate median
  // Speed of light. The roofline time comes from the operator's flops and bytes formulas at the
  // calibrated peaks; the config's bound is the longer of it and the device's launch floor.
  double roofline_us = 0;
  double floor_us = 0;            // the measured launch floor (DevicePeaks::launch_floor_us); 0: unknown
  double sol_us = 0;              // the bound: max(roofline_us, floor_us)
  double sol_pct = 0;             // sol_us / candidate median * 100: % of the calibrated bound
  double datasheet_sol_us = 0;    // the bound from the datasheet's peaks (knowledge/hardware); 0: unknown
  double datasheet_sol_pct = 0;   // datasheet_sol_us / candidate median * 100
};

struct EvalResult {
  Outcome outcome = Outcome::crash;
  std::string detail;   // what a person or an LLM needs to act on the outcome
  std::vector<ConfigResult> configs;
  double geomean_speedup = 0;
  double wall_s = 0;
};

struct EvalRequest {
  const OperatorSpec* op = nullptr;
  KernelUnderTest candidate;
  KernelUnderTest incumbent;         // empty (no library, no cubin): correctness only
  KernelUnderTest golden;            // the operator's golden, compiled (writes fp32 outputs)
  std::vector<std::string> configs;  // empty: every config
  int seeds = 2;                     // fresh seeds for correctness
  bool time = true;                  // false: correctness only
  double deadline_s = 10;            // per launch, enforced by the supervisor's watchdog
  // With `time`: PyTorch eager and torch.compile timed on each config too (ConfigResult::torch), of
  // this yardstick (YardstickOf: "torch_ops:NAME" or a PyTorch problem's path; "" none).
  // torch.compile compiles once per config and helper, seconds to minutes.
  std::string torch_yardstick;
};

// A request to profile one kernel (timing run and counter runs kept apart by the worker).
struct ProfileRequest {
  const OperatorSpec* op = nullptr;
  KernelUnderTest kernel;
  std::vector<std::string> configs;  // empty: every config
  std::vector<std::string> metrics;  // empty: the default set
  // > 0: wall seconds the whole profile may take (a run's --time); past them it is abandoned (a
  // worker evaluator kills its worker, which the next request respawns) and Profile fails.
  double bound_s = 0;
};

// Implemented by the worker pool (real GPU) and by scripted evaluators in tests.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual EvalResult Evaluate(const EvalRequest& req) = 0;
  // One KernelProfile per config; false with `err` when profiling is unavailable or failed.
  virtual bool Profile(const ProfileRequest& req, std::vector<KernelProfile>* out, std::string* err) {
    (void)req;
    (void)out;
    *err = "this evaluator cannot profile";
    return false;
  }
  // A short description of the device it evaluates on ("NVIDIA H200, 132 SMs, ...").
  virtual std::string DeviceName() const { return ""; }
  // The driver version of that device ("580.159.04"), for seals.
  virtual std::string DriverVersion() const { return ""; }
  // The multiprocessor count of that device, which manifests read as num_sms; 0 while unknown (not
  // probed yet, or a scripted evaluator): callers then bind the nominal count (NominalSmCount).
  virtual int64_t SmCount() const { return 0; }
};

// What num_sms binds to for launches on `evaluator`'s device: its SmCount where known (null or 0:
// not), else the nominal count of `arch` (NominalSmCount).
int64_t DeviceSmCountOr(const Evaluator* evaluator, const std::string& arch);

}  // namespace forgek
