// driver_api.h: what the C++ examples share of the CUDA driver API: a check that ends the program on
// a failed call, device memory freed with its scope, event timing of repeated calls, and the device's
// primary context with a stream.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace example {

// A failed driver call ends the program: the examples have nothing to undo that their exit does not.
inline void Check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS) name = "an unknown CUresult";
  std::fprintf(stderr, "%s failed: %s\n", call, name);
  std::exit(1);
}

// Device memory, freed when it goes out of scope.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (bytes > 0) Check(cuMemAlloc(&ptr_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    if (ptr_ != 0) cuMemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr get() const { return ptr_; }
  // The export takes device pointers as void* (NULL for no workspace).
  void* ptr() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr_)); }

 private:
  CUdeviceptr ptr_ = 0;
};

// Microseconds per call of `call` (which returns true on success), timed on `stream` with one event
// pair around `repeats` calls; stops at the first failed call and returns a negative time then.
template <class Call>
double MicrosecondsPerCall(CUstream stream, int repeats, Call&& call) {
  CUevent start = nullptr, stop = nullptr;
  Check(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  Check(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  Check(cuEventRecord(start, stream), "cuEventRecord");
  bool ok = true;
  for (int i = 0; i < repeats && ok; ++i) ok = call();
  Check(cuEventRecord(stop, stream), "cuEventRecord");
  Check(cuEventSynchronize(stop), "cuEventSynchronize");
  float elapsed_ms = 0;
  Check(cuEventElapsedTime(&elapsed_ms, start, stop), "cuEventElapsedTime");
  cuEventDestroy(start);
  cuEventDestroy(stop);
  return ok ? 1000.0 * elapsed_ms / repeats : -1.0;
}

// Device 0's primary context, current on this thread, and a non-blocking stream of the program's own.
struct Gpu {
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  char name[256] = {};

  Gpu() {
    Check(cuInit(0), "cuInit");
    Check(cuDeviceGet(&device, 0), "cuDeviceGet");
    Check(cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
    Check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    Check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    Check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~Gpu() {
    cuStreamDestroy(stream);
    cuDevicePrimaryCtxRelease(device);
  }
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
};

}  // namespace example
