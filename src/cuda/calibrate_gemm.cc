// cuBLASLt GEMMs and copies timed with events: the measured ceilings of a device.
#include "forgek/cuda/calibrate_gemm.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "forgek/cuda/device_kernels.h"
#include "library_registry.h"

namespace forgek::cuda {
namespace {

bool CheckRt(cudaError_t e, const char* what, std::string* err) {
  if (e == cudaSuccess) return true;
  *err = std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  return false;
}

bool CheckLt(cublasStatus_t s, const char* what, std::string* err) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  *err = std::string(what) + ": cuBLASLt status " + std::to_string(static_cast<int>(s));
  return false;
}

// Frees what it holds when the measurement ends, however it ends.
struct Scratch {
  std::vector<void*> buffers;
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Scratch() {
    for (void* p : buffers) cudaFree(p);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    for (auto l : {a, b, c})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op) cublasLtMatmulDescDestroy(op);
    if (lt) cublasLtDestroy(lt);
  }
  void* Alloc(size_t bytes, std::string* err) {
    void* p = nullptr;
    if (!CheckRt(cudaMalloc(&p, bytes), "allocate calibration buffer", err)) return nullptr;
    buffers.push_back(p);
    return p;
  }
};

// Median milliseconds of `iters` runs of `body`, after `warmup` runs.
template <typename F>
bool TimeMs(cudaStream_t stream, int warmup, int iters, F&& body, double* median_ms, std::string* err) {
  double us = 0;
  if (!MedianEventTimeUs(stream, warmup, iters, body, &us, err)) return false;
  *median_ms = us / 1000.0;
  return true;
}

}  // namespace

const char* GemmPeakTypeName(GemmPeakType t) {
  switch (t) {
    case GemmPeakType::bf16: return "bf16";
    case GemmPeakType::fp16: return "fp16";
    case GemmPeakType::fp8_e4m3: return "fp8_e4m3";
    case GemmPeakType::tf32: return "tf32";
  }
  return "?";
}

bool MeasureGemmTflops(GemmPeakType type, int n, void* stream_ptr, double* tflops, std::string* err) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  cudaDataType_t in_type = CUDA_R_16BF, out_type = CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  ElemType in_elem = ElemType::bf16;
  size_t in_bytes = 2, out_bytes = 2;
  switch (type) {
    case GemmPeakType::bf16: break;
    case GemmPeakType::fp16:
      in_type = out_type = CUDA_R_16F, in_elem = ElemType::f16;
      break;
    case GemmPeakType::fp8_e4m3:
      in_type = CUDA_R_8F_E4M3, in_elem = ElemType::e4m3, in_bytes = 1;
      break;
    case GemmPeakType::tf32:
      in_type = out_type = CUDA_R_32F, in_elem = ElemType::f32, in_bytes = out_bytes = 4;
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
  }
  Scratch s;
  size_t nn = static_cast<size_t>(n) * n;
  const size_t workspace_bytes = 64u << 20;
  void* a = s.Alloc(nn * in_bytes, err);
  void* b = a ? s.Alloc(nn * in_bytes, err) : nullptr;
  void* c = b ? s.Alloc(nn * out_bytes, err) : nullptr;
  void* ws = c ? s.Alloc(workspace_bytes, err) : nullptr;
  if (!ws) return false;
  InitParams normal;
  if (!FillRandom(a, in_elem, static_cast<int64_t>(nn), 1, normal, stream, err) ||
      !FillRandom(b, in_elem, static_cast<int64_t>(nn), 2, normal, stream, err))
    return false;
  // TN (A transposed): the layout cuBLASLt's fp8 kernels require; used for every type alike.
  cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  if (!CheckLt(cublasLtCreate(&s.lt), "cublasLtCreate", err) ||
      !CheckLt(cublasLtMatmulDescCreate(&s.op, compute, CUDA_R_32F), "matmul descriptor", err) ||
      !CheckLt(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans), "transA", err) ||
      !CheckLt(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof no_trans), "transB",
               err) ||
      !CheckLt(cublasLtMatrixLayoutCreate(&s.a, in_type, n, n, n), "layout A", err) ||
      !CheckLt(cublasLtMatrixLayoutCreate(&s.b, in_type, n, n, n), "layout B", err) ||
      !CheckLt(cublasLtMatrixLayoutCreate(&s.c, out_type, n, n, n), "layout C", err) ||
      !CheckLt(cublasLtMatmulPreferenceCreate(&s.pref), "preference", err) ||
      !CheckLt(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof workspace_bytes),
               "workspace preference", err))
    return false;
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  if (!CheckLt(cublasLtMatmulAlgoGetHeuristic(s.lt, s.op, s.a, s.b, s.c, s.c, s.pref, 1, &heuristic, &found),
               "algorithm heuristic", err))
    return false;
  if (found == 0) return *err = std::string("cuBLASLt has no algorithm for ") + GemmPeakTypeName(type), false;
  float alpha = 1, beta = 0;
  auto body = [&] {
    return CheckLt(cublasLtMatmul(s.lt, s.op, &alpha, a, s.a, b, s.b, &beta, c, s.c, c, s.c, &heuristic.algo, ws,
                                  workspace_bytes, stream),
                   "cublasLtMatmul", err);
  };
  double ms = 0;
  if (!TimeMs(stream, 3, 10, body, &ms, err)) return false;
  *tflops = 2.0 * n * static_cast<double>(n) * n / (ms * 1e-3) / 1e12;
  return true;
}

bool MeasureCopyGbps(long long bytes, void* stream_ptr, double* kernel_gbps, double* memcpy_gbps, std::string* err) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  Scratch s;
  void* src = s.Alloc(static_cast<size_t>(bytes), err);
  void* dst = src ? s.Alloc(static_cast<size_t>(bytes), err) : nullptr;
  if (!dst) return false;
  InitParams normal;
  if (!FillRandom(src, ElemType::f32, bytes / 4, 3, normal, stream, err)) return false;
  double ms = 0;
  if (!TimeMs(stream, 3, 10, [&] { return CopyFloat4(dst, src, bytes, stream, err); }, &ms, err)) return false;
  *kernel_gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
  auto memcpy_body = [&] {
    return CheckRt(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream), "memcpy",
                   err);
  };
  if (!TimeMs(stream, 3, 10, memcpy_body, &ms, err)) return false;
  *memcpy_gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
  return true;
}

}  // namespace forgek::cuda
