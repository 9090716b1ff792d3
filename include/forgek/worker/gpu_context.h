// The worker's hold on the GPU: driver, primary context, stream, buffers, modules, errors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "forgek/cuda/device_kernels.h"
#include "forgek/cuda/driver.h"
#include "forgek/core/operator_spec.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek::worker {

// A failed GPU step: the driver's code (CUDA_SUCCESS when the failure was not the driver's),
// what failed, and which kernel was running.
struct GpuError {
  CUresult code = CUDA_SUCCESS;
  std::string message;
  std::string kernel;
  bool sticky() const { return cuda::IsStickyError(code); }
};

// Fills `err` from a driver result; true on success.
bool Ck(CUresult r, const std::string& what, GpuError* err);

// Device memory freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  bool Allocate(int64_t bytes, GpuError* err);
  CUdeviceptr ptr() const { return ptr_; }
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  int64_t bytes() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  int64_t bytes_ = 0;
};

cuda::ElemType ToElemType(DType t);

class GpuContext {
 public:
  // Loads the driver, makes device 0's primary context current (shared with the runtime API the
  // helper kernels use), creates the stream and the L2 flush buffer (twice the L2).
  bool Init(GpuError* err);

  const cuda::Driver& d() const { return *driver_; }
  CUstream stream() const { return stream_; }
  const DeviceInfo& device() const { return device_; }

  // A loaded cubin, cached by content for the life of the worker.
  bool LoadModule(const std::string& cubin, CUmodule* out, GpuError* err);

  bool Sync(const std::string& what, GpuError* err);
  // Turns a helper's error text into a GpuError, asking the driver for the sticky code.
  bool HelperFailed(const std::string& text, GpuError* err);
  bool FlushL2(GpuError* err);

 private:
  const cuda::Driver* driver_ = nullptr;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  DeviceInfo device_;
  DeviceBuffer flush_;
  std::map<std::string, CUmodule> modules_;  // by cubin bytes
};

// Probes the driver and every device without keeping a context.
ProbeResult ProbeDevices();

}  // namespace forgek::worker
