// A kernel under test bound to one config's buffers: ready-made launch arguments per input copy.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "forgek/cuda/library_reference.h"
#include "forgek/worker/gpu_context.h"

namespace forgek::worker {

// Where each operator tensor lives for one launch sequence.
using TensorBindings = std::map<std::string, DeviceTensor>;

class BoundKernel {
 public:
  // Loads the cubin (or creates the library reference) and allocates workspaces.
  bool Init(GpuContext* gpu, const WireKernel& kernel, const WireConfig& config, GpuError* err);
  // Adds one argument set (tensor maps, argument buffers, or a prepared library call); returns
  // its index through `instance`.
  bool AddInstance(const TensorBindings& tensors, int* instance, GpuError* err);
  int instances() const { return static_cast<int>(instances_.size()); }
  // After the inputs were refilled from a new seed: library calls that plan from input values
  // plan again (kernels read their inputs when launched and need nothing).
  bool InputsChanged(GpuError* err);
  // Enqueues the launch sequence of `instance` on the context's stream (workspaces marked zero
  // are cleared first, as part of the sequence).
  bool Enqueue(int instance, GpuError* err);
  const std::string& label() const { return kernel_.label; }

 private:
  struct ArgSlot {
    alignas(64) unsigned char bytes[128];
  };
  struct Instance {
    std::deque<ArgSlot> slots;                    // stable addresses
    std::vector<std::vector<void*>> params;       // per launch: pointers into slots
    std::unique_ptr<LibraryReference> library;
  };
  bool EncodeTensorMap(const ResolvedTensorMap& m, const TensorBindings& tensors, CUtensorMap* out, GpuError* err);

  GpuContext* gpu_ = nullptr;
  WireKernel kernel_;
  const WireConfig* config_ = nullptr;
  std::vector<CUfunction> functions_;  // per launch
  std::vector<DeviceBuffer> workspaces_;
  std::vector<std::unique_ptr<Instance>> instances_;
};

}  // namespace forgek::worker
