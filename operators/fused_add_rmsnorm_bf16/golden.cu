/* forgek
{
  "name": "fused_add_rmsnorm_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "fused_add_rmsnorm_bf16_golden", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "residual", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// The truth for fused_add_rmsnorm_bf16: one CTA per row, every step in fp64.
//   r        = x + residual                       (exact in fp64)
//   residual = bf16(r), rounded once               (inout: the golden gets residual in its own
//                                                   dtype, holding the same initial values)
//   y        = r / sqrt(sum(r^2) / N + eps) * w, written as fp32
// Pass 1 only reads; in pass 2 each element of residual is read and then overwritten by the
// same thread, after the barrier that ends pass 1, so no thread sees an updated value.
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
fused_add_rmsnorm_bf16_golden(const __nv_bfloat16* __restrict__ x,  // [M, N]
                              __nv_bfloat16* __restrict__ residual, // [M, N], updated in place
                              const __nv_bfloat16* __restrict__ w,  // [N]
                              float* __restrict__ y,                // [M, N], fp32 truth
                              int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  __nv_bfloat16* rrow = residual + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  double local = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double r = static_cast<double>(__bfloat162float(xrow[j])) + static_cast<double>(__bfloat162float(rrow[j]));
    local += r * r;
  }
  const double inv_rms = 1.0 / sqrt(block_sum(local) / N + static_cast<double>(eps));

  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double r = static_cast<double>(__bfloat162float(xrow[j])) + static_cast<double>(__bfloat162float(rrow[j]));
    rrow[j] = __double2bfloat16(r);
    yrow[j] = static_cast<float>(r * inv_rms * static_cast<double>(__bfloat162float(w[j])));
  }
}
