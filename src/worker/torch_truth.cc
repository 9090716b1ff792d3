// A PyTorch golden's truth for one config and seed: device inputs to the host, the helper, back.
#include "torch_truth.h"

#include <chrono>
#include <cstdlib>

#include "forgek/protocol/timing_stats.h"

namespace forgek::worker {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Whether a tensor can cross to PyTorch at all: no inout, a dtype the helper carries.
bool Crosses(const TensorBuffers& b, GpuError* err) {
  if (b.spec.role == TensorRole::inout) {
    err->message = "tensor " + b.spec.name + " is an inout: a PyTorch golden returns its outputs and writes no input";
    return false;
  }
  if (b.spec.role == TensorRole::input && TorchWireDtype(b.spec.dtype).empty()) {
    err->message = "tensor " + b.spec.name + " is " + DTypeName(b.spec.dtype) + ", which does not cross to PyTorch";
    return false;
  }
  return true;
}

// Copy 0 of every input on the host, in order; the outputs' truths and buffers. False for an inout
// or a dtype that does not cross to PyTorch.
bool GatherInputs(GpuContext* gpu, ConfigBuffers* buffers, std::vector<TorchTensor>* inputs,
                  std::vector<TruthSpec>* truths, std::vector<TensorBuffers*>* results, GpuError* err) {
  const cuda::Driver& d = gpu->d();
  for (TensorBuffers& b : buffers->tensors()) {
    if (!Crosses(b, err)) return false;
    if (b.spec.role == TensorRole::output) {
      truths->push_back({b.spec.name, b.truth_dtype(), b.spec.shape});
      results->push_back(&b);
      continue;
    }
    TorchTensor t;
    t.name = b.spec.name;
    t.dtype = TorchWireDtype(b.spec.dtype);
    t.shape = b.spec.shape;
    t.bytes.resize(static_cast<size_t>(b.spec.bytes()));
    if (!t.bytes.empty() &&
        !Ck(d.cuMemcpyDtoHAsync(t.bytes.data(), b.copies[0].ptr(), t.bytes.size(), gpu->stream()),
            "copy " + t.name + " to the host", err))
      return false;
    inputs->push_back(std::move(t));
  }
  return gpu->Sync("copy inputs to the host", err);
}

// How a PyTorch golden's tensors cross to the helper (FORGEK_TORCH_TRANSPORT): `automatic` maps
// them through CUDA IPC and falls back to the pipes for good when that fails where the pipes work;
// `pipes` copies them through the host; `cuda_ipc` maps them or fails.
enum class Transport { automatic, pipes, cuda_ipc };

bool TransportFromEnv(Transport* out, std::string* err) {
  const char* value = std::getenv("FORGEK_TORCH_TRANSPORT");
  const std::string v = value ? value : "";
  if (v.empty() || v == "auto") *out = Transport::automatic;
  else if (v == "pipes") *out = Transport::pipes;
  else if (v == "cuda_ipc") *out = Transport::cuda_ipc;
  else return *err = "FORGEK_TORCH_TRANSPORT=" + v + ": expected auto, pipes or cuda_ipc", false;
  return true;
}

// One buffer as the helper maps it: its allocation's IPC handle and its offset there.
bool Export(const cuda::Driver& d, const std::string& name, DType dtype, const std::vector<int64_t>& shape,
            const DeviceBuffer& buffer, TorchDeviceTensor* out, std::string* why) {
  out->name = name;
  out->dtype = TorchWireDtype(dtype);
  out->shape = shape;
  out->nbytes = TorchWireDtypeSize(out->dtype);
  for (int64_t dim : shape) out->nbytes *= dim;
  if (out->nbytes <= 0) return *why = "tensor " + name + " is empty: nothing to map", false;
  if (out->nbytes > buffer.bytes())
    return *why = "tensor " + name + ": " + std::to_string(out->nbytes) + " bytes in a buffer of " +
                  std::to_string(buffer.bytes()),
           false;
  CUdeviceptr base = 0;
  size_t size = 0;
  CUipcMemHandle handle;
  GpuError err;
  if (!Ck(d.cuMemGetAddressRange(&base, &size, buffer.ptr()), "find the allocation of " + name, &err) ||
      !Ck(d.cuIpcGetMemHandle(&handle, base), "export " + name + " through CUDA IPC", &err))
    return *why = err.message, false;
  out->handle.assign(reinterpret_cast<const char*>(&handle), sizeof handle);
  out->offset = static_cast<int64_t>(buffer.ptr() - base);
  return true;
}

// One seed's cost added to the config's.
void AddSeed(double total_ms, double copy_ms, const TorchRunInfo& info, const char* transport, GoldenTiming* timing) {
  timing->seeds += 1;
  timing->total_ms += total_ms;
  timing->copy_ms += copy_ms;
  timing->compute_ms += info.compute_s * 1000.0;
  timing->device = info.device;
  timing->transport = transport;
}

enum class OnDevice { ok, failed, unavailable };

// The truth computed where the tensors lie: copy 0 of every input and every truth buffer handed to
// the helper through CUDA IPC. `unavailable` with `why` when the tensors could not be mapped or the
// helper failed (the pipes may serve); `failed` with `err` for a GPU error of the worker's own.
OnDevice ComputeOnDevice(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
                         TorchGolden* torch, GoldenTiming* timing, std::string* why, GpuError* err) {
  const auto start = Clock::now();
  std::vector<TorchDeviceTensor> inputs, outputs;
  std::vector<TruthSpec> truths;
  for (TensorBuffers& b : buffers->tensors()) {
    if (!Crosses(b, err)) return OnDevice::failed;
    const bool output = b.spec.role == TensorRole::output;
    const DType dtype = output ? b.truth_dtype() : b.spec.dtype;
    TorchDeviceTensor t;
    if (!Export(gpu->d(), b.spec.name, dtype, b.spec.shape, output ? b.truth : b.copies[0], &t, why))
      return OnDevice::unavailable;
    (output ? outputs : inputs).push_back(std::move(t));
    if (output) truths.push_back({b.spec.name, dtype, b.spec.shape});
  }
  // The helper reads the inputs and overwrites the poisoned truths: both done on our stream first.
  if (!gpu->Sync("hand the tensors to the PyTorch golden", err)) return OnDevice::failed;
  const double map_ms = MsSince(start);
  TorchRunInfo info;
  if (!torch->ComputeOnDevice(file, config.values, inputs, outputs, truths, &info, why)) return OnDevice::unavailable;
  AddSeed(MsSince(start), map_ms, info, "cuda_ipc", timing);
  return OnDevice::ok;
}

// The same through the pipes: inputs to the host, the outputs' bytes back into the truths.
bool ComputeThroughPipes(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
                         TorchGolden* torch, GoldenTiming* timing, GpuError* err);

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
  Transport transport = Transport::automatic;
  if (!TransportFromEnv(&transport, &err->message)) return false;
  if (transport == Transport::pipes || (transport == Transport::automatic && !torch->ipc_refused().empty()))
    return ComputeThroughPipes(gpu, buffers, config, file, torch, timing, err);
  std::string why;
  switch (ComputeOnDevice(gpu, buffers, config, file, torch, timing, &why, err)) {
    case OnDevice::ok: return true;
    case OnDevice::failed: return false;
    case OnDevice::unavailable: break;
  }
  if (transport == Transport::cuda_ipc) return err->message = "FORGEK_TORCH_TRANSPORT=cuda_ipc: " + why, false;
  // The pipes decide whose fault it was: when they serve the same request, CUDA IPC is given up;
  // when they fail too, the golden itself failed, and its error is theirs.
  if (!ComputeThroughPipes(gpu, buffers, config, file, torch, timing, err)) return false;
  torch->RefuseIpc(why);
  return true;
}

namespace {

bool ComputeThroughPipes(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
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

  AddSeed(MsSince(start), copy_ms, info, "pipes", timing);
  return true;
}

}  // namespace

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
