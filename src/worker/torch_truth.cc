// A PyTorch golden's truth for one config and seed: device inputs to the host, the helper, back.
#include "torch_truth.h"

#include <chrono>

#include "forgek/protocol/timing_stats.h"

namespace forgek::worker {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Copy 0 of every input on the host, in order; the outputs' truths and buffers. False for an inout
// or a dtype that does not cross to PyTorch.
bool GatherInputs(GpuContext* gpu, ConfigBuffers* buffers, std::vector<TorchTensor>* inputs,
                  std::vector<TruthSpec>* truths, std::vector<TensorBuffers*>* results, GpuError* err) {
  const cuda::Driver& d = gpu->d();
  for (TensorBuffers& b : buffers->tensors()) {
    if (b.spec.role == TensorRole::inout) {
      err->message = "tensor " + b.spec.name + " is an inout: a PyTorch golden returns its outputs and writes no input";
      return false;
    }
    if (b.spec.role == TensorRole::output) {
      truths->push_back({b.spec.name, b.truth_dtype(), b.spec.shape});
      results->push_back(&b);
      continue;
    }
    TorchTensor t;
    t.name = b.spec.name;
    t.dtype = TorchWireDtype(b.spec.dtype);
    t.shape = b.spec.shape;
    if (t.dtype.empty()) {
      err->message = "tensor " + b.spec.name + " is " + DTypeName(b.spec.dtype) + ", which does not cross to PyTorch";
      return false;
    }
    t.bytes.resize(static_cast<size_t>(b.spec.bytes()));
    if (!t.bytes.empty() &&
        !Ck(d.cuMemcpyDtoHAsync(t.bytes.data(), b.copies[0].ptr(), t.bytes.size(), gpu->stream()),
            "copy " + t.name + " to the host", err))
      return false;
    inputs->push_back(std::move(t));
  }
  return gpu->Sync("copy inputs to the host", err);
}

// The helper's samples summarised as the worker's own timings.
void Summarise(const TorchTimeReply& reply, TorchYardstick* out) {
  out->device = reply.device;
  out->torch_version = reply.torch_version;
  auto fill = [&reply](const std::string& mode, TimingStats* stats, std::string* error) {
    if (auto e = reply.errors.find(mode); e != reply.errors.end()) *error = e->second;
    else if (auto us = reply.us.find(mode); us != reply.us.end() && !us->second.empty()) *stats = Summarize(us->second, {});
    else *error = "the helper timed no " + mode + " call";
  };
  fill("eager", &out->eager, &out->eager_error);
  fill("compile", &out->compiled, &out->compile_error);
}

}  // namespace

bool ComputeTorchTruth(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
                       TorchGolden* torch, GoldenTiming* timing, GpuError* err) {
  const cuda::Driver& d = gpu->d();
  const auto start = Clock::now();
  std::vector<TorchTensor> inputs;
  std::vector<TruthSpec> truths;
  std::vector<TensorBuffers*> results;
  if (!GatherInputs(gpu, buffers, &inputs, &truths, &results, err)) return false;
  double copy_ms = MsSince(start);

  std::vector<TorchTensor> outputs;
  TorchRunInfo info;
  if (!torch->Compute(file, config.values, inputs, truths, &outputs, &info, &err->message)) return false;

  const auto upload = Clock::now();
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& bytes = outputs[i].bytes;
    if (static_cast<int64_t>(bytes.size()) != results[i]->truth.bytes()) {
      err->message = "output " + results[i]->spec.name + ": the PyTorch golden gave " + std::to_string(bytes.size()) +
                     " bytes for " + std::to_string(results[i]->truth.bytes());
      return false;
    }
    if (!bytes.empty() &&
        !Ck(d.cuMemcpyHtoDAsync(results[i]->truth.ptr(), bytes.data(), bytes.size(), gpu->stream()),
            "copy " + results[i]->spec.name + " from the PyTorch golden", err))
      return false;
  }
  // The host bytes must outlive the asynchronous copies.
  if (!gpu->Sync("copy the PyTorch golden's outputs", err)) return false;
  copy_ms += MsSince(upload);

  timing->seeds += 1;
  timing->total_ms += MsSince(start);
  timing->copy_ms += copy_ms;
  timing->compute_ms += info.compute_s * 1000.0;
  timing->device = info.device;
  return true;
}

void MeasureTorchYardstick(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config,
                           const std::string& yardstick, TorchGolden* torch, TorchYardstick* out) {
  TorchTimeReply reply;
  std::string why;
  if (yardstick.rfind(kTorchOpsYardstick, 0) == 0) {
    // A built-in operator: the helper draws its inputs from the config's inits, on its device.
    if (!torch->TimeTorchOps(yardstick.substr(std::string(kTorchOpsYardstick).size()), ToJson(config),
                             kTorchYardstickReps, kTorchYardstickBudgetS, &reply, &why)) {
      out->eager_error = out->compile_error = why;
      return;
    }
    Summarise(reply, out);
    return;
  }
  const std::string& file = yardstick;
  std::vector<TorchTensor> inputs;
  std::vector<TruthSpec> truths;
  std::vector<TensorBuffers*> results;
  GpuError err;
  if (!GatherInputs(gpu, buffers, &inputs, &truths, &results, &err)) {
    out->eager_error = out->compile_error = err.message;
    return;
  }
  if (!torch->Time(file, config.values, inputs, kTorchYardstickReps, kTorchYardstickBudgetS, &reply, &why)) {
    out->eager_error = out->compile_error = why;
    return;
  }
  Summarise(reply, out);
}

}  // namespace forgek::worker
