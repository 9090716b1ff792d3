/* forgek
{
  "name": "gemv_bf16_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "gemv_golden", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"], "args": ["x", "W", "y", "K", "N"]}
  ]
}
*/
// The truth for gemv_bf16: y[n] = sum_k x[k] * W[k, n], one thread per output column, one
// sequential fp32 sum over k (neighbouring threads read neighbouring columns of a row of W, so the
// loads coalesce). y written as fp32.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
gemv_golden(const __nv_bfloat16* __restrict__ x,  // [1, K]
            const __nv_bfloat16* __restrict__ W,  // [K, N] row-major
            float* __restrict__ y,                // [1, N], fp32
            int K, int N)
{
  const int n = blockIdx.x * THREADS + threadIdx.x;
  if (n >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum = fmaf(__bfloat162float(x[k]), __bfloat162float(W[(size_t)k * N + n]), sum);
  y[n] = sum;
}
