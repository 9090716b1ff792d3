// The worker's PyTorch golden on the host: the helper process and the check of what it answers.
#include "torch_golden.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace forgek::worker {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

std::string TorchWireDtype(DType t) {
  std::string name = DTypeName(t);
  return TorchWireDtypeSize(name) > 0 ? name : "";
}

bool MatchTruths(const std::vector<TorchTensor>& outputs, const std::vector<TruthSpec>& truths, std::string* err) {
  if (outputs.size() != truths.size())
    return *err = fmt::format("the PyTorch golden gave {} outputs, the operator has {}", outputs.size(), truths.size()),
           false;
  for (size_t i = 0; i < truths.size(); ++i) {
    const TorchTensor& o = outputs[i];
    const TruthSpec& t = truths[i];
    const std::string want = DTypeName(t.dtype);
    if (o.dtype != want)
      return *err = fmt::format("output {} ({}): the PyTorch golden gave {}, the golden's {} was expected", i, t.name,
                                o.dtype, want),
             false;
    if (o.shape != t.shape)
      return *err = fmt::format("output {} ({}): the PyTorch golden gave shape {}, the config's is {}", i, t.name,
                                ShapeText(o.shape), ShapeText(t.shape)),
             false;
  }
  return true;
}

bool TorchGolden::Ensure(const std::string& file, std::string* err) {
  if (server_.running() && file_ == file) return true;
  if (server_.running()) server_.Stop();
  TorchHelperPaths paths;
  if (!FindTorchHelper(&paths, err)) return false;
  // No --sizes: each request names its config's.
  if (!server_.Start(paths, file, {}, err)) return *err = "starting the torch helper: " + *err, false;
  // An empty echo: a helper that cannot import torch has answered its refusal and exited by now.
  std::vector<TorchTensor> none;
  if (!server_.Exchange("echo", {}, &none, err)) {
    int code = server_.Stop();
    *err = fmt::format("the torch helper ({} {}) did not start (exit {}): {}", paths.python, paths.script, code, *err);
    return false;
  }
  spdlog::info("PyTorch golden {}: {} {} serve", file, paths.python, paths.script);
  file_ = file;
  return true;
}

bool TorchGolden::Compute(const std::string& file, const std::map<std::string, int64_t>& sizes,
                          const std::vector<TorchTensor>& inputs, const std::vector<TruthSpec>& truths,
                          std::vector<TorchTensor>* outputs, TorchRunInfo* info, std::string* err) {
  if (!Ensure(file, err)) return false;
  std::string why;
  if (!server_.Run(sizes, inputs, outputs, info, &why)) return *err = Failure(file, why), false;
  return MatchTruths(*outputs, truths, err);
}

bool TorchGolden::ComputeOnDevice(const std::string& file, const std::map<std::string, int64_t>& sizes,
                                  const std::vector<TorchDeviceTensor>& inputs,
                                  const std::vector<TorchDeviceTensor>& outputs, const std::vector<TruthSpec>& truths,
                                  TorchRunInfo* info, std::string* err) {
  if (!Ensure(file, err)) return false;
  std::string why;
  std::vector<TorchTensor> written;
  if (!server_.RunOnDevice(sizes, inputs, outputs, &written, info, &why)) return *err = Failure(file, why), false;
  return MatchTruths(written, truths, err);
}

void TorchGolden::RefuseIpc(const std::string& why) {
  if (!ipc_refused_.empty()) return;
  ipc_refused_ = why;
  spdlog::warn("the PyTorch golden's tensors go through the pipes from now on: CUDA IPC failed ({})", why);
}

bool TorchGolden::Time(const std::string& file, const std::map<std::string, int64_t>& sizes,
                       const std::vector<TorchTensor>& inputs, int reps, double budget_s, TorchTimeReply* out,
                       std::string* err) {
  if (!Ensure(file, err)) return false;
  std::string why;
  if (!server_.Time(sizes, inputs, reps, budget_s, out, &why)) return *err = Failure(file, why), false;
  return true;
}

bool TorchGolden::TimeTorchOps(const std::string& name, const nlohmann::json& config, int reps, double budget_s,
                               TorchTimeReply* out, std::string* err) {
  // A helper already serving a problem file times torch_ops as well: no restart (importing torch
  // takes seconds).
  if (!server_.running() && !Ensure("", err)) return false;
  std::string why;
  if (!server_.TimeTorchOps(name, config, reps, budget_s, out, &why)) return *err = Failure("torch_ops." + name, why), false;
  return true;
}

std::string TorchGolden::Failure(const std::string& file, const std::string& why) {
  // A broken pipe or a helper that ended (no torch, killed): the next request starts a fresh one.
  int code = -1;
  if (why.find("ended before") != std::string::npos || why.find("writing to") != std::string::npos ||
      why.find("PyTorch is not installed") != std::string::npos)
    code = server_.Stop();
  return "the PyTorch golden " + file + ": " + why + (code >= 0 ? fmt::format(" (the helper exited {})", code) : "");
}

}  // namespace forgek::worker
