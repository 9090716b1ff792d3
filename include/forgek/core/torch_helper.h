// The PyTorch side of forgek (scripts/forgek_torch_helper.py, docs/importing.md): where it and a
// python3 with torch are found, what it says of a KernelBench problem or a FlashInfer-Bench
// definition, and its framed protocol.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/operator_spec.h"

namespace forgek {

// The interpreter and the script. The interpreter: $FORGEK_PYTHON when set; else, of python3 in
// PATH and /usr/bin/python3 (Debian's python3-torch is installed for it), the first that has torch
// (looked for once per process, without importing it), else the first that exists; which one was
// picked is logged. The script: $FORGEK_TORCH_HELPER, else scripts/forgek_torch_helper.py of the
// shipped data (FindDataDir("scripts", ...)). False with what is missing and how to get it.
struct TorchHelperPaths {
  std::string python, script;
};
bool FindTorchHelper(TorchHelperPaths* paths, std::string* err);

// What `check` says: the interpreter imports torch (the version; whether it sees a CUDA device).
struct TorchCheck {
  std::string python, torch_version;
  bool cuda = false;
};
// Runs `check` (torch really imported, once per interpreter and process). False with the helper's
// message (PyTorch is not installed for ...: install python3-torch or set FORGEK_PYTHON).
bool CheckTorch(const TorchHelperPaths& paths, TorchCheck* out, std::string* err);

// True when an operator's `golden` names a PyTorch golden rather than a CUDA kernel: a KernelBench
// problem (`.py`) or a FlashInfer-Bench definition (`.json`, docs/importing.md).
bool IsTorchGolden(const std::string& golden);

// What PyTorch times beside forgek's kernels for `op` (docs/importing.md, "PyTorch as the
// yardstick"): "torch_ops:NAME" for operator.json's "yardstick", else the absolute path of a
// PyTorch golden (the problem is its own yardstick), else "" (none).
inline constexpr char kTorchOpsYardstick[] = "torch_ops:";
std::string YardstickOf(const OperatorSpec& op);

// Everything a PyTorch golden needs before a run starts (the helper found, torch imported), so
// that a run without them stops at once. False with "the golden of OP is a PyTorch problem
// (golden.py), which needs ...: why".
bool CheckTorchGoldenRuns(const std::string& op_name, const std::string& golden, TorchHelperPaths* paths,
                          std::string* err);

// One tensor of a described problem; dims are size-constant names or integers (as text).
struct ProblemTensor {
  std::string name, role, dtype;  // role "input" / "output"; dtype a forgek dtype name
  std::vector<std::string> shape;
  nlohmann::json init;            // an init spec for inputs, null for outputs
  std::string state_key;          // a Model parameter's state_dict key, else ""
};

// What `describe` says of a KernelBench problem, or of a FlashInfer-Bench definition (kind
// "flashinfer": params are its axes, and there are scalars and the outputs' magnitudes).
struct KernelBenchProblem {
  std::string file;
  std::string kind;                       // "kernelbench" or "flashinfer"
  std::vector<std::string> params;        // the size constants
  std::map<std::string, int64_t> config;  // their values (after --sizes)
  std::vector<ProblemTensor> tensors;     // inputs, then parameters, then outputs
  nlohmann::json fixed;                   // other module-level numbers
  nlohmann::json scalars;                 // a definition's scalar inputs: [{"name", "dtype", "value"}]
  std::map<std::string, double> max_abs;  // each output's largest |value|: a definition's at the config,
                                          // a problem's where magnitude_at says
  std::string magnitude_at;               // a problem's: "config" (run at its sizes) or "probe" (too large)
  std::string torch_version;
};

// Where a refusal is: the problem file and line (0 when unknown), and why.
struct ProblemError {
  std::string file;
  int line = 0;
  std::string message;
  std::string str() const;  // "FILE:LINE: message" (no line when 0)
};

// Runs `describe FILE --sizes NAME=V,...` (FILE a problem .py or a definition .json) in a fresh
// process (timeout_s of wall time) and parses its answer. False with the refusal, located where the
// problem says, or what went wrong running it.
bool DescribeKernelBench(const TorchHelperPaths& paths, const std::string& file,
                         const std::map<std::string, int64_t>& sizes, double timeout_s,
                         KernelBenchProblem* problem, ProblemError* error);

// Runs `seed FILE --sizes NAME=V,...` in a fresh process: the seed kernel forgek writes for an
// elementwise KernelBench problem (its forward traced; one thread per element). False with the
// refusal (which operation is not elementwise) or what went wrong running it.
bool WriteElementwiseSeed(const TorchHelperPaths& paths, const std::string& file,
                          const std::map<std::string, int64_t>& sizes, double timeout_s, std::string* source,
                          ProblemError* error);

// A tensor on the wire: a forgek dtype (f64 f32 f16 bf16 i8 u8 i32 i64, or bool) and its raw bytes.
struct TorchTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// Bytes per element of a dtype the protocol carries; 0 for any other.
int TorchWireDtypeSize(const std::string& dtype);

// One framed message: the header line, then each tensor's bytes. False when a tensor's byte count
// does not match its shape and dtype, or the dtype is not carried.
bool EncodeTorchMessage(const std::string& op, const std::vector<TorchTensor>& tensors, std::string* out,
                        std::string* err);
// The same with more header members (a `run`'s "sizes"); `header` holds them, "op" included.
bool EncodeTorchRequest(const nlohmann::json& header, const std::vector<TorchTensor>& tensors, std::string* out,
                        std::string* err);

// A tensor left where it lies on the worker's GPU: the helper maps it through its CUDA IPC handle
// (the allocation's, `offset` bytes from its base) instead of receiving its bytes.
struct TorchDeviceTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string handle;  // the CUipcMemHandle's 64 bytes
  int64_t offset = 0, nbytes = 0;
};

// The request's JSON form of device tensors (the handle as hex). False when a tensor's byte count
// does not match its shape and dtype, the dtype is not carried, or the handle is not 64 bytes.
bool DeviceTensorsJson(const std::vector<TorchDeviceTensor>& tensors, nlohmann::json* out, std::string* err);

// What the helper says of one `run` besides its tensors.
struct TorchRunInfo {
  std::string device;    // where it computed: "cpu" or "cuda"
  double compute_s = 0;  // its own time for the request (building the Model included, pipes not)
};

// What `time` answers (the yardstick): raw samples in microseconds per mode ("eager", "compile"),
// or why a mode did not run.
struct TorchTimeReply {
  std::string device, torch_version;
  std::map<std::string, std::vector<double>> us;
  std::map<std::string, std::string> errors;
};

// A `serve` process and its pipes. Exchange sends one request and reads its reply.
class TorchServer {
 public:
  TorchServer() = default;
  ~TorchServer();
  TorchServer(const TorchServer&) = delete;
  TorchServer& operator=(const TorchServer&) = delete;

  // Starts `serve [FILE --sizes ...]` (no file: only `echo`). False with the reason.
  bool Start(const TorchHelperPaths& paths, const std::string& file, const std::map<std::string, int64_t>& sizes,
             std::string* err);
  // Sends op with tensors; fills the reply's tensors. False with the reply's error or a broken pipe.
  bool Exchange(const std::string& op, const std::vector<TorchTensor>& tensors, std::vector<TorchTensor>* reply,
                std::string* err);
  // `run` at `sizes` (the request's size constants; empty: those of Start), the golden's outputs
  // in `reply`. False as Exchange.
  bool Run(const std::map<std::string, int64_t>& sizes, const std::vector<TorchTensor>& inputs,
           std::vector<TorchTensor>* reply, TorchRunInfo* info, std::string* err);
  // `run` with its tensors on the GPU (`run` with "on_device"): the helper maps `inputs` and
  // `outputs` through their IPC handles, computes the golden on that device and writes each output
  // into its tensor, then unmaps them. `written` gets what it computed (name, dtype, shape; no
  // bytes) to be checked as Run's reply is. False as Exchange; a helper computing on the CPU refuses.
  bool RunOnDevice(const std::map<std::string, int64_t>& sizes, const std::vector<TorchDeviceTensor>& inputs,
                   const std::vector<TorchDeviceTensor>& outputs, std::vector<TorchTensor>* written,
                   TorchRunInfo* info, std::string* err);
  // `time` at `sizes` with the inputs in their own dtypes: at most `reps` samples per mode, sampling
  // stopped after `budget_s` (5 samples at least). False as Exchange, or when the reply is malformed.
  bool Time(const std::map<std::string, int64_t>& sizes, const std::vector<TorchTensor>& inputs, int reps,
            double budget_s, TorchTimeReply* out, std::string* err);
  // `time` of scripts/torch_ops.py's `name` (a built-in operator's yardstick), its inputs drawn by
  // the helper at `config` (the worker's WireConfig as JSON: values, tensors with inits, scalars).
  // Needs no problem file: the helper may serve none.
  bool TimeTorchOps(const std::string& name, const nlohmann::json& config, int reps, double budget_s,
                    TorchTimeReply* out, std::string* err);
  bool running() const { return pid_ > 0; }
  // Closes its stdin and waits for it to end; its exit code (-1 when none was started).
  int Stop();

 private:
  bool TimeRequest(const nlohmann::json& header, const std::vector<TorchTensor>& inputs, TorchTimeReply* out,
                   std::string* err);
  bool Send(const nlohmann::json& header, const std::vector<TorchTensor>& tensors, std::vector<TorchTensor>* reply,
            nlohmann::json* reply_header, std::string* err);

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

}  // namespace forgek
