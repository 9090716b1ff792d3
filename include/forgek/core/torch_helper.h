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

namespace forgek {

// The interpreter and the script: $FORGEK_PYTHON, else /usr/bin/python3 when it exists (Debian's
// python3-torch is installed for it), else python3 found in PATH; $FORGEK_TORCH_HELPER, else
// scripts/forgek_torch_helper.py of the shipped data (FindDataDir("scripts", ...)). False with
// what is missing and how to get it.
struct TorchHelperPaths {
  std::string python, script;
};
bool FindTorchHelper(TorchHelperPaths* paths, std::string* err);

// True when an operator's `golden` names a PyTorch golden rather than a CUDA kernel: a KernelBench
// problem (`.py`) or a FlashInfer-Bench definition (`.json`, docs/importing.md).
bool IsTorchGolden(const std::string& golden);

// What a run says of a PyTorch golden while the worker cannot run one (docs/importing.md).
std::string TorchGoldenNotRunMessage(const std::string& op_name, const std::string& golden);

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
  std::map<std::string, double> max_abs;  // a definition's outputs: the largest |value| at the config
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
  // Closes its stdin and waits for it to end; its exit code (-1 when none was started).
  int Stop();

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

}  // namespace forgek
