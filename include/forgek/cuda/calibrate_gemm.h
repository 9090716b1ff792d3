// Dense GEMM throughput through cuBLASLt, for the speed-of-light peaks of `forgek worker --calibrate`.
#pragma once

#include <string>

namespace forgek::cuda {

enum class GemmPeakType { bf16, fp16, fp8_e4m3, tf32 };
const char* GemmPeakTypeName(GemmPeakType t);

// Times an n x n x n GEMM on random data (TN layout, fp32 accumulation; fp8 writes bf16) on
// `stream` and returns the median throughput in TFLOP/s.
bool MeasureGemmTflops(GemmPeakType type, int n, void* stream, double* tflops, std::string* err);

// Times a device-to-device copy of `bytes` by the float4 kernel and by cudaMemcpyAsync; GB/s
// counting read and write.
bool MeasureCopyGbps(long long bytes, void* stream, double* kernel_gbps, double* memcpy_gbps, std::string* err);

}  // namespace forgek::cuda
