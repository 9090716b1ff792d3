/* forgek
{
  "name": "layernorm_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "layernorm_bf16_golden", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "gamma", "beta", "y", "M", "N", "eps"]}
  ]
}
*/
// The truth for layernorm_bf16: one CTA per row, every step in fp64, y written as fp32.
//   mean = sum(x) / N                     (fp64 sum)
//   var  = sum((x - mean)^2) / N          (two-pass: no cancellation)
//   y    = (x - mean) / sqrt(var + eps) * gamma + beta
// Scalar loads, a shared-memory tree reduction: clarity over speed.
#include <cuda_bf16.h>

__device__ double block_sum(double value) {
  __shared__ double partial[THREADS];  // [THREADS] one value per thread, halved each step (THREADS = 2^k)
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  const double result = partial[0];
  __syncthreads();  // partial[] is reused by the next call
  return result;
}

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_bf16_golden(const __nv_bfloat16* __restrict__ x,      // [M, N]
                      const __nv_bfloat16* __restrict__ gamma,  // [N]
                      const __nv_bfloat16* __restrict__ beta,   // [N]
                      float* __restrict__ y,                    // [M, N], fp32 truth
                      int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  double local = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) local += static_cast<double>(__bfloat162float(xrow[j]));
  const double mean = block_sum(local) / N;

  local = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double d = static_cast<double>(__bfloat162float(xrow[j])) - mean;
    local += d * d;
  }
  const double var = block_sum(local) / N;
  const double inv_std = 1.0 / sqrt(var + static_cast<double>(eps));

  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double normalised = (static_cast<double>(__bfloat162float(xrow[j])) - mean) * inv_std;
    yrow[j] = static_cast<float>(normalised * static_cast<double>(__bfloat162float(gamma[j])) +
                                 static_cast<double>(__bfloat162float(beta[j])));
  }
}
