// The worker's helper kernels: seeded inputs, poisoning, fp64 comparison, L2 flush, clock probe.
#include "forgek/cuda/device_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

namespace forgek::cuda {
namespace {

bool Check(cudaError_t e, const char* what, std::string* err) {
  if (e == cudaSuccess) return true;
  if (err) *err = std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  return false;
}

bool CheckLaunch(const char* what, std::string* err) { return Check(cudaGetLastError(), what, err); }

int GridFor(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 132 * 32) blocks = 132 * 32;  // grid-stride beyond this; enough for any GPU to fill
  return blocks < 1 ? 1 : static_cast<int>(blocks);
}

// splitmix64 finaliser over (seed, counter): a counter-based generator, so element i's value
// depends on nothing but the seed and i.
__device__ __forceinline__ uint64_t Hash(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1): never exactly 0 or 1, so logs and inverse CDFs stay finite.
__device__ __forceinline__ double Uniform01(uint64_t seed, uint64_t counter) {
  return (static_cast<double>(Hash(seed, counter) >> 11) + 0.5) * 0x1.0p-53;
}

__device__ __forceinline__ double Normal(uint64_t seed, uint64_t i) {
  double u1 = Uniform01(seed, 2 * i), u2 = Uniform01(seed, 2 * i + 1);
  return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
}

template <typename T>
__device__ __forceinline__ void StoreFloat(T* p, double v);
template <> __device__ __forceinline__ void StoreFloat(double* p, double v) { *p = v; }
template <> __device__ __forceinline__ void StoreFloat(float* p, double v) { *p = static_cast<float>(v); }
template <> __device__ __forceinline__ void StoreFloat(__half* p, double v) { *p = __double2half(v); }
template <> __device__ __forceinline__ void StoreFloat(__nv_bfloat16* p, double v) { *p = __double2bfloat16(v); }
template <> __device__ __forceinline__ void StoreFloat(__nv_fp8_e4m3* p, double v) { *p = __nv_fp8_e4m3(v); }
template <> __device__ __forceinline__ void StoreFloat(__nv_fp8_e5m2* p, double v) { *p = __nv_fp8_e5m2(v); }

template <typename T>
__device__ __forceinline__ double LoadAsDouble(const T* p) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) {
    return static_cast<double>(static_cast<float>(*p));
  } else {
    return static_cast<double>(*p);
  }
}

template <typename T>
constexpr bool kIsFloat = !std::is_integral_v<T>;

// Stores `v`, nudging float values that round to zero to +-2^-6 (representable in every float
// type), so that no input holds zeros a kernel could get away with ignoring.
template <typename T>
__device__ __forceinline__ void StoreValue(T* p, double v) {
  if constexpr (kIsFloat<T>) {
    StoreFloat(p, v);
    if (LoadAsDouble(p) == 0.0) StoreFloat(p, v < 0 ? -0.015625 : 0.015625);
  } else {
    *p = static_cast<T>(llrint(v));
  }
}

template <typename T>
__global__ void FillKernel(T* out, int64_t n, uint64_t seed, int dist, double a, double b) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double v;
    if (dist == static_cast<int>(InitDist::normal)) {
      v = a + b * Normal(seed, i);
    } else if (dist == static_cast<int>(InitDist::uniform)) {
      v = a + (b - a) * Uniform01(seed, i);
    } else {  // int_range: integers in [a, b)
      v = floor(a + (b - a) * Uniform01(seed, i));
      if (v >= b) v = b - 1;
    }
    StoreValue(out + i, v);
  }
}

// One block per row: exponential draws normalised by their sum (a flat Dirichlet sample).
template <typename T>
__global__ void ProbsKernel(T* out, int64_t row_len, uint64_t seed) {
  __shared__ double partial[32];
  int64_t base = blockIdx.x * row_len;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) sum += -log(Uniform01(seed, base + j));
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) total += partial[w];
    partial[0] = total;
  }
  __syncthreads();
  double total = partial[0];
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x)
    StoreValue(out + base + j, -log(Uniform01(seed, base + j)) / total);
}

template <typename T>
bool LaunchFill(void* ptr, int64_t n, uint64_t seed, const InitParams& init, cudaStream_t s, std::string* err) {
  T* out = static_cast<T*>(ptr);
  if (init.dist == InitDist::probs) {
    int64_t row = init.row > 0 ? init.row : 1;
    int64_t rows = n / row;
    if (rows > 0) ProbsKernel<T><<<static_cast<unsigned>(rows), 256, 0, s>>>(out, row, seed);
  } else {
    FillKernel<T><<<GridFor(n, 256), 256, 0, s>>>(out, n, seed, static_cast<int>(init.dist), init.a, init.b);
  }
  return CheckLaunch("fill inputs", err);
}

template <typename W>
__global__ void PoisonKernel(W* out, int64_t n, W pattern) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = pattern;
}

struct DeviceCompareState {
  double sum_sq_diff, sum_sq_truth;
  unsigned long long max_abs_bits;  // a non-negative double compares like its bit pattern
  unsigned long long bad, non_finite, unwritten, first_bad;
  unsigned int samples;
  long long sample_index[CompareStats::kSamples];
  double sample_cand[CompareStats::kSamples], sample_truth[CompareStats::kSamples];
};

// Whether an integer candidate element still holds Poison's pattern (float poison is a NaN,
// counted as non-finite instead).
template <typename C>
__device__ bool IsPoisonPattern(const C* p) {
  if constexpr (kIsFloat<C>) {
    return false;
  } else if constexpr (sizeof(C) == 1) {
    return *reinterpret_cast<const uint8_t*>(p) == 0x7F;
  } else if constexpr (sizeof(C) == 4) {
    return *reinterpret_cast<const uint32_t*>(p) == 0x7F7F7F7Fu;
  } else {
    return *reinterpret_cast<const unsigned long long*>(p) == 0x7F7F7F7F7F7F7F7Full;
  }
}

template <typename C, typename T>
__global__ void CompareKernel(const C* cand, const T* truth, int64_t n, double tol, bool exact,
                              DeviceCompareState* st) {
  double sq_diff = 0, sq_truth = 0, max_abs = 0;
  unsigned long long bad = 0, non_finite = 0, unwritten = 0, first = ~0ull;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double c = LoadAsDouble(cand + i), t = LoadAsDouble(truth + i);
    double d = fabs(c - t);
    bool finite = isfinite(c) && isfinite(t);
    bool is_bad = !finite || (exact ? c != t : d > tol);
    if (finite) {
      sq_diff += d * d;
      sq_truth += t * t;
      max_abs = fmax(max_abs, d);
    } else {
      ++non_finite;
    }
    if (is_bad) {
      ++bad;
      if (IsPoisonPattern(cand + i)) ++unwritten;
      if (static_cast<unsigned long long>(i) < first) first = i;
      unsigned slot = atomicAdd(&st->samples, 1u);
      if (slot < CompareStats::kSamples) {
        st->sample_index[slot] = i;
        st->sample_cand[slot] = c;
        st->sample_truth[slot] = t;
      }
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    sq_diff += __shfl_down_sync(0xffffffffu, sq_diff, off);
    sq_truth += __shfl_down_sync(0xffffffffu, sq_truth, off);
    max_abs = fmax(max_abs, __shfl_down_sync(0xffffffffu, max_abs, off));
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    non_finite += __shfl_down_sync(0xffffffffu, non_finite, off);
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, off);
    first = min(first, __shfl_down_sync(0xffffffffu, first, off));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&st->sum_sq_diff, sq_diff);
    atomicAdd(&st->sum_sq_truth, sq_truth);
    atomicMax(&st->max_abs_bits, static_cast<unsigned long long>(__double_as_longlong(max_abs)));
    if (bad) atomicAdd(&st->bad, bad);
    if (non_finite) atomicAdd(&st->non_finite, non_finite);
    if (unwritten) atomicAdd(&st->unwritten, unwritten);
    if (first != ~0ull) atomicMin(&st->first_bad, first);
  }
}

// Puts the first bad element into sample slot 0, so the report always starts with it.
template <typename C, typename T>
__global__ void FirstBadKernel(const C* cand, const T* truth, DeviceCompareState* st) {
  if (st->first_bad == ~0ull) return;
  int64_t i = static_cast<int64_t>(st->first_bad);
  st->sample_index[0] = i;
  st->sample_cand[0] = LoadAsDouble(cand + i);
  st->sample_truth[0] = LoadAsDouble(truth + i);
}

DeviceCompareState* CompareScratch(std::string* err) {
  static DeviceCompareState* scratch = nullptr;
  if (!scratch && !Check(cudaMalloc(&scratch, sizeof(DeviceCompareState)), "allocate compare state", err))
    return nullptr;
  return scratch;
}

template <typename C, typename T>
bool LaunchCompare(const void* cand, const void* truth, int64_t n, double tol, bool exact, cudaStream_t s,
                   DeviceCompareState* st, std::string* err) {
  CompareKernel<C, T><<<GridFor(n, 256), 256, 0, s>>>(static_cast<const C*>(cand), static_cast<const T*>(truth),
                                                      n, tol, exact, st);
  FirstBadKernel<C, T><<<1, 1, 0, s>>>(static_cast<const C*>(cand), static_cast<const T*>(truth), st);
  return CheckLaunch("compare outputs", err);
}

template <typename C>
bool CompareWithTruth(const void* cand, const void* truth, ElemType truth_type, int64_t n, double tol, bool exact,
                      cudaStream_t s, DeviceCompareState* st, std::string* err) {
  if constexpr (kIsFloat<C>) {
    if (truth_type == ElemType::f32) return LaunchCompare<C, float>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::f64) return LaunchCompare<C, double>(cand, truth, n, tol, exact, s, st, err);
    // A 16-bit inout keeps its own dtype in the golden (docs/operator-format.md).
    if (truth_type == ElemType::bf16) return LaunchCompare<C, __nv_bfloat16>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::f16) return LaunchCompare<C, __half>(cand, truth, n, tol, exact, s, st, err);
  } else {
    if (truth_type == ElemType::i64) return LaunchCompare<C, long long>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::i32) return LaunchCompare<C, int>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::u32) return LaunchCompare<C, unsigned>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::i8) return LaunchCompare<C, int8_t>(cand, truth, n, tol, exact, s, st, err);
    if (truth_type == ElemType::u8) return LaunchCompare<C, uint8_t>(cand, truth, n, tol, exact, s, st, err);
  }
  if (err) *err = "compare: the golden output's type does not fit the candidate's (float outputs need f32 truth)";
  return false;
}

// Calls f.template operator()<T>() for the C++ type of `t`.
template <typename F>
bool DispatchType(ElemType t, F&& f) {
  switch (t) {
    case ElemType::f64: return f.template operator()<double>();
    case ElemType::f32: return f.template operator()<float>();
    case ElemType::f16: return f.template operator()<__half>();
    case ElemType::bf16: return f.template operator()<__nv_bfloat16>();
    case ElemType::e4m3: return f.template operator()<__nv_fp8_e4m3>();
    case ElemType::e5m2: return f.template operator()<__nv_fp8_e5m2>();
    case ElemType::i8: return f.template operator()<int8_t>();
    case ElemType::u8: return f.template operator()<uint8_t>();
    case ElemType::i32: return f.template operator()<int>();
    case ElemType::u32: return f.template operator()<unsigned>();
    case ElemType::i64: return f.template operator()<long long>();
  }
  return false;
}

__global__ void ClockKernel(double* mhz, long long spin_ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (static_cast<long long>(t1 - t0) < spin_ns);
  long long c1 = clock64();
  *mhz = static_cast<double>(c1 - c0) * 1000.0 / static_cast<double>(t1 - t0);
}

__global__ void EmptyKernel() {}

__global__ void SpinKernel(long long spin_ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (static_cast<long long>(t1 - t0) < spin_ns);
}

__global__ void CopyFloat4Kernel(float4* __restrict__ dst, const float4* __restrict__ src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

}  // namespace

bool FillRandom(void* ptr, ElemType type, int64_t n, uint64_t seed, const InitParams& init, void* stream,
                std::string* err) {
  if (n <= 0) return true;
  auto s = static_cast<cudaStream_t>(stream);
  return DispatchType(type, [&]<typename T>() { return LaunchFill<T>(ptr, n, seed, init, s, err); });
}

bool Poison(void* ptr, ElemType type, int64_t n, void* stream, std::string* err) {
  if (n <= 0) return true;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case ElemType::f64:  // 0x7FFFFFFF7FFFFFFF is a NaN
      PoisonKernel<uint32_t><<<GridFor(2 * n, 256), 256, 0, s>>>(static_cast<uint32_t*>(ptr), 2 * n, 0x7FFFFFFFu);
      break;
    case ElemType::f32:
      PoisonKernel<uint32_t><<<GridFor(n, 256), 256, 0, s>>>(static_cast<uint32_t*>(ptr), n, 0x7FFFFFFFu);
      break;
    case ElemType::f16:
    case ElemType::bf16:
      PoisonKernel<uint16_t><<<GridFor(n, 256), 256, 0, s>>>(static_cast<uint16_t*>(ptr), n, uint16_t{0x7FFF});
      break;
    case ElemType::e4m3:
    case ElemType::e5m2:
    case ElemType::i8:
    case ElemType::u8:  // 0x7F: NaN in both fp8 formats
      PoisonKernel<uint8_t><<<GridFor(n, 256), 256, 0, s>>>(static_cast<uint8_t*>(ptr), n, uint8_t{0x7F});
      break;
    case ElemType::i32:
    case ElemType::u32:
      PoisonKernel<uint32_t><<<GridFor(n, 256), 256, 0, s>>>(static_cast<uint32_t*>(ptr), n, 0x7F7F7F7Fu);
      break;
    case ElemType::i64:
      PoisonKernel<uint64_t><<<GridFor(n, 256), 256, 0, s>>>(static_cast<uint64_t*>(ptr), n, 0x7F7F7F7F7F7F7F7Full);
      break;
  }
  return CheckLaunch("poison outputs", err);
}

bool Compare(const void* cand, ElemType cand_type, const void* truth, ElemType truth_type, int64_t n,
             double max_abs_tol, bool exact, void* stream, CompareStats* out, std::string* err) {
  *out = CompareStats{};
  if (n <= 0) return true;
  auto s = static_cast<cudaStream_t>(stream);
  DeviceCompareState* st = CompareScratch(err);
  if (!st) return false;
  DeviceCompareState init{};
  init.first_bad = ~0ull;
  if (!Check(cudaMemcpyAsync(st, &init, sizeof init, cudaMemcpyHostToDevice, s), "reset compare state", err))
    return false;
  bool launched = DispatchType(cand_type, [&]<typename C>() {
    return CompareWithTruth<C>(cand, truth, truth_type, n, max_abs_tol, exact, s, st, err);
  });
  if (!launched) return false;
  DeviceCompareState host{};
  if (!Check(cudaMemcpyAsync(&host, st, sizeof host, cudaMemcpyDeviceToHost, s), "read compare state", err) ||
      !Check(cudaStreamSynchronize(s), "compare outputs", err))
    return false;
  out->sum_sq_diff = host.sum_sq_diff;
  out->sum_sq_truth = host.sum_sq_truth;
  std::memcpy(&out->max_abs, &host.max_abs_bits, sizeof(double));
  out->bad = static_cast<int64_t>(host.bad);
  out->non_finite = static_cast<int64_t>(host.non_finite);
  out->unwritten = static_cast<int64_t>(host.unwritten);
  out->first_bad = host.first_bad == ~0ull ? -1 : static_cast<int64_t>(host.first_bad);
  out->samples = host.samples < CompareStats::kSamples ? static_cast<int>(host.samples) : CompareStats::kSamples;
  if (out->first_bad >= 0 && out->samples == 0) out->samples = 1;
  for (int k = 0; k < out->samples; ++k) {
    out->sample_index[k] = host.sample_index[k];
    out->sample_cand[k] = host.sample_cand[k];
    out->sample_truth[k] = host.sample_truth[k];
  }
  return true;
}

bool FlushL2(void* buffer, int64_t bytes, void* stream, std::string* err) {
  static int value = 0;
  value = (value + 1) & 0xFF;  // a different value each time: no write can be elided
  return Check(cudaMemsetAsync(buffer, value, static_cast<size_t>(bytes), static_cast<cudaStream_t>(stream)),
               "flush L2", err);
}

bool MeasureSmClockMhz(void* stream, double* mhz, std::string* err) {
  static double* result = nullptr;
  if (!result && !Check(cudaMalloc(&result, sizeof(double)), "allocate clock probe", err)) return false;
  auto s = static_cast<cudaStream_t>(stream);
  ClockKernel<<<1, 1, 0, s>>>(result, 20000);
  if (!CheckLaunch("clock probe", err)) return false;
  return Check(cudaMemcpyAsync(mhz, result, sizeof(double), cudaMemcpyDeviceToHost, s), "read clock probe", err) &&
         Check(cudaStreamSynchronize(s), "clock probe", err);
}

bool CopyFloat4(void* dst, const void* src, int64_t bytes, void* stream, std::string* err) {
  int64_t n = bytes / 16;
  int device = 0, sms = 132;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  int64_t blocks = (n + 255) / 256;
  if (blocks > int64_t(sms) * 8) blocks = int64_t(sms) * 8;
  CopyFloat4Kernel<<<static_cast<unsigned>(blocks < 1 ? 1 : blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<float4*>(dst), static_cast<const float4*>(src), n);
  return CheckLaunch("copy kernel", err);
}

bool Spin(double us, void* stream, std::string* err) {
  SpinKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<long long>(us * 1000));
  return CheckLaunch("spin", err);
}

bool LaunchEmpty(int launches, void* stream, std::string* err) {
  for (int i = 0; i < launches; ++i) {
    EmptyKernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>();
    if (!CheckLaunch("empty kernel", err)) return false;
  }
  return true;
}

}  // namespace forgek::cuda
