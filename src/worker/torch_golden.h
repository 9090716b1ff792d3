// A golden given as a PyTorch problem: the worker's helper process, fed one config's inputs on the
// host and answering the golden's outputs (docs/importing.md, "The worker's PyTorch golden").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "forgek/core/operator_spec.h"
#include "forgek/core/torch_helper.h"

namespace forgek::worker {

// One tensor the golden writes, as the worker holds its truth: name, the truth's dtype (f32 for a
// floating output) and shape.
struct TruthSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};

// The helper of one worker: started at the first golden asked of it (torch imported then, so a
// missing torch fails the first request, not a later one), again when the problem file changes;
// each request carries its config's sizes.
class TorchGolden {
 public:
  // The golden's outputs for `inputs` at `sizes`, checked against `truths` (their number, dtypes
  // and shapes, in order: the problem's outputs are the operator's outputs in order). False with
  // the reason; a helper that died is started again at the next call.
  bool Compute(const std::string& file, const std::map<std::string, int64_t>& sizes,
               const std::vector<TorchTensor>& inputs, const std::vector<TruthSpec>& truths,
               std::vector<TorchTensor>* outputs, TorchRunInfo* info, std::string* err);
  // The same with the tensors left on the worker's GPU (TorchServer::RunOnDevice): the helper maps
  // `inputs` and `outputs` through their IPC handles and writes each output into its truth buffer.
  // False with the reason, as Compute; the caller may then send the tensors through the pipes.
  bool ComputeOnDevice(const std::string& file, const std::map<std::string, int64_t>& sizes,
                       const std::vector<TorchDeviceTensor>& inputs, const std::vector<TorchDeviceTensor>& outputs,
                       const std::vector<TruthSpec>& truths, TorchRunInfo* info, std::string* err);
  // Why CUDA IPC is not used any more by this worker ("" while it may be): set once the helper
  // could not map the tensors and the pipes then served the same request.
  const std::string& ipc_refused() const { return ipc_refused_; }
  void RefuseIpc(const std::string& why);
  // The yardstick: the problem in its own dtypes on `inputs`, timed eagerly and under torch.compile
  // (TorchServer::Time). False with the reason, as Compute.
  bool Time(const std::string& file, const std::map<std::string, int64_t>& sizes,
            const std::vector<TorchTensor>& inputs, int reps, double budget_s, TorchTimeReply* out, std::string* err);
  // A built-in operator's yardstick, scripts/torch_ops.py's `name` (TorchServer::TimeTorchOps); the
  // helper serves no problem file for it.
  bool TimeTorchOps(const std::string& name, const nlohmann::json& config, int reps, double budget_s,
                    TorchTimeReply* out, std::string* err);

 private:
  bool Ensure(const std::string& file, std::string* err);
  // The helper's failure `why` as the caller's error; a helper that ended is stopped.
  std::string Failure(const std::string& file, const std::string& why);

  std::string file_;
  std::string ipc_refused_;
  TorchServer server_;
};

// The wire name of a dtype that crosses to PyTorch (forgek's own name), "" for one that does not
// (e4m3, e5m2, u32: torch has no such tensor where forgek runs it).
std::string TorchWireDtype(DType t);

// Whether the helper's outputs are the truths asked for; false naming the first disagreement.
bool MatchTruths(const std::vector<TorchTensor>& outputs, const std::vector<TruthSpec>& truths, std::string* err);

}  // namespace forgek::worker
