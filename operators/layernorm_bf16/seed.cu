/* forgek
{
  "name": "layernorm_block_row_three_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "layernorm_bf16_seed", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "gamma", "beta", "y", "M", "N", "eps"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, three passes over the row.
//   pass 1: mean                          (reads x)
//   pass 2: variance around the mean     (reads x again)
//   pass 3: y = (x - mean) * rstd * gamma + beta   (reads x a third time, writes y)
// Scalar 2-byte accesses and shared-memory tree reductions. Correct for any M, N; left slow on
// purpose: x is read three times and every reduction walks log2(THREADS) barriers.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_bf16_seed(const __nv_bfloat16* __restrict__ x,      // [M, N]
                    const __nv_bfloat16* __restrict__ gamma,  // [N]
                    const __nv_bfloat16* __restrict__ beta,   // [N]
                    __nv_bfloat16* __restrict__ y,            // [M, N]
                    int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  __nv_bfloat16* yrow = y + static_cast<size_t>(row) * N;

  float local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) local += __bfloat162float(xrow[j]);
  const float mean = fk::block_sum_tree<THREADS>(local) / N;

  local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const float d = __bfloat162float(xrow[j]) - mean;
    local += d * d;
  }
  const float rstd = rsqrtf(fk::block_sum_tree<THREADS>(local) / N + eps);

  for (int j = threadIdx.x; j < N; j += THREADS) {
    const float normalised = (__bfloat162float(xrow[j]) - mean) * rstd;
    yrow[j] = __float2bfloat16(normalised * __bfloat162float(gamma[j]) + __bfloat162float(beta[j]));
  }
}
