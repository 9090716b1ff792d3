// The CUDA driver API, loaded at run time from libcuda.so.1 so the binary starts without a GPU.
#pragma once

#include <cuda.h>

#include <string>

namespace forgek::cuda {

// Every driver entry point the worker uses. The X-macro keeps the list, the table and the lookup
// in one place; cuda.h maps some names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2), which
// the table follows, while the lookup asks cuGetProcAddress for the base name at CUDA_VERSION.
#define FORGEK_DRIVER_FUNCTIONS(X) \
  X(cuInit)                        \
  X(cuDriverGetVersion)            \
  X(cuGetErrorName)                \
  X(cuGetErrorString)              \
  X(cuDeviceGet)                   \
  X(cuDeviceGetCount)              \
  X(cuDeviceGetName)               \
  X(cuDeviceGetAttribute)          \
  X(cuDeviceTotalMem)              \
  X(cuDevicePrimaryCtxRetain)      \
  X(cuCtxSetCurrent)               \
  X(cuCtxSynchronize)              \
  X(cuModuleLoadData)              \
  X(cuModuleUnload)                \
  X(cuModuleGetFunction)           \
  X(cuFuncSetAttribute)            \
  X(cuFuncGetAttribute)            \
  X(cuLaunchKernelEx)              \
  X(cuTensorMapEncodeTiled)        \
  X(cuMemAlloc)                    \
  X(cuMemFree)                     \
  X(cuMemGetInfo)                  \
  X(cuMemGetAddressRange)          \
  X(cuIpcGetMemHandle)             \
  X(cuMemsetD8Async)               \
  X(cuMemsetD16Async)              \
  X(cuMemsetD32Async)              \
  X(cuMemcpyDtoHAsync)             \
  X(cuMemcpyHtoDAsync)             \
  X(cuMemcpyDtoDAsync)             \
  X(cuStreamCreate)                \
  X(cuStreamDestroy)               \
  X(cuStreamSynchronize)           \
  X(cuStreamBeginCapture)          \
  X(cuStreamEndCapture)            \
  X(cuGraphInstantiateWithFlags)   \
  X(cuGraphLaunch)                 \
  X(cuGraphExecDestroy)            \
  X(cuGraphDestroy)                \
  X(cuEventCreate)                 \
  X(cuEventDestroy)                \
  X(cuEventRecord)                 \
  X(cuEventSynchronize)            \
  X(cuEventElapsedTime)

struct Driver {
#define FORGEK_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  FORGEK_DRIVER_FUNCTIONS(FORGEK_DRIVER_MEMBER)
#undef FORGEK_DRIVER_MEMBER
  int version = 0;  // cuDriverGetVersion, e.g. 13000
};

// Loads libcuda.so.1 and resolves the table once (thread-safe); later calls return the same
// result. Returns nullptr with `err` ("no NVIDIA driver: libcuda.so.1 not found", or the symbol
// that is missing) when the driver cannot be used. Does not call cuInit.
const Driver* LoadDriver(std::string* err);

// "CUDA_ERROR_ILLEGAL_ADDRESS" for 700, or "CUDA_ERROR_<code>" when the driver is not loaded.
std::string ErrorName(CUresult r);
// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered".
std::string ErrorText(CUresult r);

// Errors after which the context is unusable: the process must report, exit and be respawned.
bool IsStickyError(CUresult r);

}  // namespace forgek::cuda
