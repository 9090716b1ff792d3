// The worker's GPU context: driver loading, device facts, stream, buffers and the module cache.
#include "forgek/worker/gpu_context.h"

#include <cuda_runtime.h>

#include <spdlog/spdlog.h>

namespace forgek::worker {

bool Ck(CUresult r, const std::string& what, GpuError* err) {
  if (r == CUDA_SUCCESS) return true;
  err->code = r;
  err->message = what + ": " + cuda::ErrorText(r);
  return false;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    if (const cuda::Driver* d = cuda::LoadDriver(nullptr)) d->cuMemFree(ptr_);
  }
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    this->~DeviceBuffer();
    ptr_ = o.ptr_, bytes_ = o.bytes_;
    o.ptr_ = 0, o.bytes_ = 0;
  }
  return *this;
}

bool DeviceBuffer::Allocate(int64_t bytes, GpuError* err) {
  const cuda::Driver* d = cuda::LoadDriver(nullptr);
  *this = DeviceBuffer();
  // Never a zero-sized allocation: an empty tensor still gets a valid, distinct pointer.
  size_t size = static_cast<size_t>(bytes > 0 ? bytes : 256);
  if (!Ck(d->cuMemAlloc(&ptr_, size), "allocate " + std::to_string(size) + " bytes", err)) return false;
  bytes_ = bytes;
  return true;
}

cuda::ElemType ToElemType(DType t) {
  switch (t) {
    case DType::f64: return cuda::ElemType::f64;
    case DType::f32: return cuda::ElemType::f32;
    case DType::f16: return cuda::ElemType::f16;
    case DType::bf16: return cuda::ElemType::bf16;
    case DType::e4m3: return cuda::ElemType::e4m3;
    case DType::e5m2: return cuda::ElemType::e5m2;
    case DType::i8: return cuda::ElemType::i8;
    case DType::u8: return cuda::ElemType::u8;
    case DType::i32: return cuda::ElemType::i32;
    case DType::u32: return cuda::ElemType::u32;
    case DType::i64: return cuda::ElemType::i64;
  }
  return cuda::ElemType::f32;
}

namespace {

bool ReadDevice(const cuda::Driver& d, int index, DeviceInfo* out, GpuError* err) {
  CUdevice dev;
  if (!Ck(d.cuDeviceGet(&dev, index), "cuDeviceGet", err)) return false;
  char name[256] = {};
  if (!Ck(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName", err)) return false;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    d.cuDeviceGetAttribute(&v, a, dev);
    return v;
  };
  size_t mem = 0;
  if (!Ck(d.cuDeviceTotalMem(&mem, dev), "cuDeviceTotalMem", err)) return false;
  out->index = index;
  out->name = name;
  out->cc = std::to_string(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) + "." +
            std::to_string(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  out->sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  out->l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  out->memory_bytes = static_cast<int64_t>(mem);
  out->max_sm_clock_mhz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
  out->memory_clock_mhz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000;
  out->memory_bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  return true;
}

}  // namespace

ProbeResult ProbeDevices() {
  ProbeResult p;
  std::string load_err;
  const cuda::Driver* d = cuda::LoadDriver(&load_err);
  if (!d) {
    p.error = load_err;
    return p;
  }
  GpuError err;
  int count = 0;
  if (!Ck(d->cuInit(0), "cuInit", &err) || !Ck(d->cuDeviceGetCount(&count), "cuDeviceGetCount", &err)) {
    p.error = err.message;
    return p;
  }
  if (count == 0) {
    p.error = "the NVIDIA driver sees no device";
    return p;
  }
  for (int i = 0; i < count; ++i) {
    DeviceInfo info;
    if (!ReadDevice(*d, i, &info, &err)) {
      p.error = err.message;
      return p;
    }
    p.devices.push_back(info);
  }
  p.driver_version = d->version;
  p.ok = true;
  return p;
}

bool GpuContext::Init(GpuError* err) {
  std::string load_err;
  driver_ = cuda::LoadDriver(&load_err);
  if (!driver_) {
    err->message = load_err;
    return false;
  }
  const cuda::Driver& dr = *driver_;
  CUdevice dev;
  if (!Ck(dr.cuInit(0), "cuInit", err) || !Ck(dr.cuDeviceGet(&dev, 0), "cuDeviceGet", err) ||
      !Ck(dr.cuDevicePrimaryCtxRetain(&context_, dev), "retain the primary context", err) ||
      !Ck(dr.cuCtxSetCurrent(context_), "make the context current", err))
    return false;
  // The runtime API (helper kernels) attaches to the same primary context.
  if (cudaError_t e = cudaSetDevice(0); e != cudaSuccess) {
    err->message = std::string("cudaSetDevice: ") + cudaGetErrorString(e);
    return false;
  }
  if (!ReadDevice(dr, 0, &device_, err)) return false;
  if (!Ck(dr.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "create the stream", err)) return false;
  if (!flush_.Allocate(2 * device_.l2_bytes, err)) return false;
  spdlog::debug("worker on {} (cc {}, {} SMs, L2 {} B)", device_.name, device_.cc, device_.sms, device_.l2_bytes);
  return true;
}

bool GpuContext::LoadModule(const std::string& cubin, CUmodule* out, GpuError* err) {
  auto it = modules_.find(cubin);
  if (it != modules_.end()) return *out = it->second, true;
  CUmodule m = nullptr;
  if (!Ck(driver_->cuModuleLoadData(&m, cubin.data()), "load the cubin", err)) return false;
  modules_.emplace(cubin, m);
  *out = m;
  return true;
}

bool GpuContext::Sync(const std::string& what, GpuError* err) {
  return Ck(driver_->cuStreamSynchronize(stream_), what, err);
}

bool GpuContext::HelperFailed(const std::string& text, GpuError* err) {
  err->message = text;
  CUresult r = driver_->cuCtxSynchronize();
  if (r != CUDA_SUCCESS) err->code = r;
  return false;
}

bool GpuContext::FlushL2(GpuError* err) {
  std::string text;
  if (!cuda::FlushL2(flush_.get(), flush_.bytes(), stream_, &text)) return HelperFailed(text, err);
  return true;
}

}  // namespace forgek::worker
