// Helpers for the GPU tests of src/cuda: device detection, tensors from host vectors, bf16/fp8.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "forgek/cuda/library_reference.h"

namespace forgek::gpu_test {

// Empty when a GPU can be used; else why not (no driver, no device).
inline std::string NoGpuReason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return std::string("no usable CUDA driver: ") + cudaGetErrorName(status);
  if (count == 0) return "no CUDA device";
  return "";
}

#define FORGEK_SKIP_WITHOUT_GPU()                                  \
  do {                                                             \
    const std::string why = ::forgek::gpu_test::NoGpuReason();      \
    if (!why.empty()) GTEST_SKIP() << why;                         \
  } while (0)

inline float Bf16Round(float v) { return __bfloat162float(__float2bfloat16(v)); }

// Device tensors by name, freed with the object.
class DeviceTensors {
 public:
  ~DeviceTensors() {
    for (auto& [name, t] : map_) cudaFree(t.ptr);
  }
  template <typename T>
  void Add(const std::string& name, DType dtype, std::vector<int64_t> shape, const std::vector<T>& host) {
    DeviceTensor t{nullptr, dtype, std::move(shape)};
    ASSERT_EQ(cudaMalloc(&t.ptr, host.size() * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(t.ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    map_[name] = t;
  }
  // An output, filled with 0xFF bytes (NaN for floats) so unwritten elements show.
  void AddOutput(const std::string& name, DType dtype, std::vector<int64_t> shape, size_t element_bytes) {
    size_t n = 1;
    for (int64_t d : shape) n *= size_t(d);
    DeviceTensor t{nullptr, dtype, std::move(shape)};
    ASSERT_EQ(cudaMalloc(&t.ptr, n * element_bytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(t.ptr, 0xFF, n * element_bytes), cudaSuccess);
    map_[name] = t;
  }
  template <typename T>
  std::vector<T> Read(const std::string& name) const {
    const DeviceTensor& t = map_.at(name);
    size_t n = 1;
    for (int64_t d : t.shape) n *= size_t(d);
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), t.ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  const std::map<std::string, DeviceTensor>& map() const { return map_; }

 private:
  std::map<std::string, DeviceTensor> map_;
};

// Deterministic values in [-1, 1) (a small LCG: tests need no <random> distribution drift).
inline std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(s >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

inline std::vector<__nv_bfloat16> ToBf16(const std::vector<float>& v) {
  std::vector<__nv_bfloat16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __float2bfloat16(v[i]);
  return out;
}

inline std::vector<float> FromBf16(const std::vector<__nv_bfloat16>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __bfloat162float(v[i]);
  return out;
}

// Row-major C[M,N] = A[M,K]·B[K,N] in fp32 (or with B given as [N,K] when b_is_nk).
inline std::vector<float> MatMul(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k,
                                 bool b_is_nk = false) {
  std::vector<float> c(size_t(m) * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[size_t(i) * k + p]) * (b_is_nk ? b[size_t(j) * k + p] : b[size_t(p) * n + j]);
      c[size_t(i) * n + j] = float(acc);
    }
  return c;
}

// Max |got - want| relative to max |want| (plus a floor), with NaN counted as failure.
inline double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double max_diff = 0, max_ref = 1e-6;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(got[i] == got[i])) return 1e9;
    max_diff = std::max(max_diff, double(std::abs(got[i] - want[i])));
    max_ref = std::max(max_ref, double(std::abs(want[i])));
  }
  return max_diff / max_ref;
}

}  // namespace forgek::gpu_test
