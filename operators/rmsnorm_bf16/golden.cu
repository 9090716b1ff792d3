/* forgek
{
  "name": "rmsnorm_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "rmsnorm_bf16_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// The truth for rmsnorm_bf16: one CTA per row, every step in fp64, y written as fp32.
//   ms = sum(x^2) / N;   y = x / sqrt(ms + eps) * w
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
  return partial[0];  // called once per CTA: no reuse, no trailing barrier needed
}

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_bf16_golden(const __nv_bfloat16* __restrict__ x,  // [M, N]
                    const __nv_bfloat16* __restrict__ w,  // [N]
                    float* __restrict__ y,                // [M, N], fp32 truth
                    int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  double local = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double v = __bfloat162float(xrow[j]);
    local += v * v;
  }
  const double inv_rms = 1.0 / sqrt(block_sum(local) / N + static_cast<double>(eps));

  for (int j = threadIdx.x; j < N; j += THREADS)
    yrow[j] = static_cast<float>(static_cast<double>(__bfloat162float(xrow[j])) * inv_rms *
                                 static_cast<double>(__bfloat162float(w[j])));
}
