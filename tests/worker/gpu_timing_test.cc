// The harness's cold-L2 time of a large copy kernel against a separate nvbench-style cold
// measurement of the same kernel shape (docs/PERFORMANCE.md records both).
#include <cuda_runtime.h>
#include <sys/stat.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "forgek/cuda/device_kernels.h"
#include "gpu_worker_util.h"

namespace forgek {
namespace {

constexpr int64_t kFloats = int64_t(1) << 28;  // 1 GiB in, 1 GiB out

const char* kCopyKernel = R"(/* forgek
{
  "name": "copy_float4",
  "launches": [{"kernel": "copy_float4", "grid": [1056], "block": [256], "args": ["x", "y", "i64:N/4"]}]
}
*/
extern "C" __global__ void copy_float4(const float4* __restrict__ x, float4* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}
)";

std::string CopyOperator(const std::string& dir) {
  std::string json = R"({
  "name": "copy_f32", "category": "elementwise",
  "description": "y = x, fp32, 1 GiB: the bandwidth yardstick of the timing harness.",
  "params": ["N"],
  "configs": [{"name": "1GiB", "values": {"N": )" + std::to_string(kFloats) + R"(}}],
  "tensors": [
    {"name": "x", "role": "input", "dtype": "f32", "shape": ["N"], "init": {"dist": "normal", "mean": 0, "std": 1}},
    {"name": "y", "role": "output", "dtype": "f32", "shape": ["N"]}
  ],
  "flops": "0", "bytes": "8*N",
  "tolerance": {"rel_l2": 1e-7, "max_abs": 1e-7, "why": "a copy is exact"},
  "golden": "copy.cu", "reference": {"kernel": "copy.cu"}, "seed": "copy.cu"
})";
  std::string op_dir = dir + "/copy_f32";
  mkdir(op_dir.c_str(), 0755);
  WriteFile(op_dir + "/operator.json", json);
  WriteFile(op_dir + "/copy.cu", kCopyKernel);
  return op_dir;
}

// nvbench's cold measurement: flush L2 (memset of a buffer twice the L2), then an event pair
// around the kernel; the mean over samples, stopping at 0.5% noise or 300 samples.
double NvbenchStyleCopyMicros(double* noise) {
  int device = 0, l2 = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  void *src, *dst, *flush;
  cudaMalloc(&src, kFloats * 4);
  cudaMalloc(&dst, kFloats * 4);
  cudaMalloc(&flush, 2 * int64_t(l2));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::string err;
  cuda::InitParams normal;
  cuda::FillRandom(src, cuda::ElemType::f32, kFloats, 7, normal, s, &err);
  for (int i = 0; i < 3; ++i) cuda::CopyFloat4(dst, src, kFloats * 4, s, &err);
  std::vector<double> us;
  for (int i = 0; i < 300; ++i) {
    cuda::FlushL2(flush, 2 * int64_t(l2), s, &err);
    cudaEventRecord(a, s);
    cuda::CopyFloat4(dst, src, kFloats * 4, s, &err);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    us.push_back(ms * 1000);
    if (us.size() >= 20) {
      double mean = std::accumulate(us.begin(), us.end(), 0.0) / us.size();
      double var = 0;
      for (double u : us) var += (u - mean) * (u - mean);
      *noise = std::sqrt(var / (us.size() - 1)) / mean;
      if (*noise < 0.005) break;
    }
  }
  cudaFree(src), cudaFree(dst), cudaFree(flush);
  cudaEventDestroy(a), cudaEventDestroy(b);
  cudaStreamDestroy(s);
  return std::accumulate(us.begin(), us.end(), 0.0) / us.size();
}

TEST(GpuTiming, HarnessCopyTimeMatchesNvbenchStyleColdMeasurement) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  TempDir dir;
  OperatorSpec op = testing::LoadOp(CopyOperator(dir.path()));
  ASSERT_FALSE(op.name.empty());
  CompilerOptions copts;
  copts.cache_dir = "";
  copts.pch_dir = "";
  Compiler compiler(copts);
  KernelUnderTest copy = testing::CompileKernel(compiler, op.dir + "/copy.cu", "copy");
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  EvalRequest req;
  req.op = &op;
  req.golden = copy;
  req.candidate = copy;
  req.incumbent = copy;
  EvalResult r = ev.Evaluate(req);
  ASSERT_TRUE(OutcomeTimed(r.outcome)) << OutcomeName(r.outcome) << ": " << r.detail;
  ASSERT_EQ(r.configs.size(), 1u);
  const TimingStats& h = r.configs[0].candidate;
  double noise = 0;
  double nv = NvbenchStyleCopyMicros(&noise);
  double gbps = 8.0 * kFloats / (h.median_us * 1e-6) / 1e9;
  std::printf("[ copy     ] harness median %.2f us (p10 %.2f p90 %.2f, noise %.2f%%, n=%d, %.0f GB/s, SOL %.1f%%); "
              "nvbench-style mean %.2f us (noise %.2f%%); ratio %.4f; incumbent %.2f us\n",
              h.median_us, h.p10_us, h.p90_us, h.rel_noise * 100, h.samples, gbps, r.configs[0].sol_pct, nv,
              noise * 100, h.median_us / nv, r.configs[0].incumbent.median_us);
  EXPECT_NEAR(h.median_us / nv, 1.0, 0.03);
  // Same kernel on both sides of the interleaving: the speedup is one within noise.
  EXPECT_NEAR(r.configs[0].speedup, 1.0, 0.03);
}

}  // namespace
}  // namespace forgek
