// `forgek worker --calibrate` and the calibrate request: measured copy and tensor-core peaks.
#include <cuda_runtime.h>

#include <spdlog/spdlog.h>

#include "cuda/calibrate_gemm.h"
#include "worker/gpu_context.h"
#include "worker/worker.h"

namespace forgek::worker {

bool Calibrate(DevicePeaks* out, std::string* err) {
  GpuContext gpu;
  GpuError gerr;
  if (!gpu.Init(&gerr)) return *err = gerr.message, false;
  DevicePeaks p;
  p.device = gpu.device().name;
  p.source = "calibrated";
  // 1 GiB each way: far beyond L2, long enough that launch overhead vanishes.
  if (!cuda::MeasureCopyGbps(1ll << 30, gpu.stream(), &p.copy_kernel_gbps, &p.memcpy_gbps, err)) return false;
  struct Entry {
    cuda::GemmPeakType type;
    double* tflops;
  };
  for (Entry e : {Entry{cuda::GemmPeakType::bf16, &p.bf16_tflops}, Entry{cuda::GemmPeakType::fp16, &p.fp16_tflops},
                  Entry{cuda::GemmPeakType::fp8_e4m3, &p.fp8_tflops}, Entry{cuda::GemmPeakType::tf32, &p.tf32_tflops}}) {
    std::string why;
    if (!cuda::MeasureGemmTflops(e.type, 8192, gpu.stream(), e.tflops, &why)) {
      // A missing type leaves its peak at 0 (no compute bound for it) rather than failing all.
      spdlog::warn("calibrate {}: {}", cuda::GemmPeakTypeName(e.type), why);
      *e.tflops = 0;
    }
  }
  *out = p;
  return true;
}

}  // namespace forgek::worker
