/* forgek
{
  "name": "rmsnorm_block_row_two_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "rmsnorm_bf16_seed", "grid": ["M"], "block": ["THREADS"], "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, two passes over the row.
//   pass 1: sum of squares             (reads x)
//   pass 2: y = x * rstd * w           (reads x again, writes y)
// Scalar 2-byte accesses and a shared-memory tree reduction. Correct for any M, N; left slow on
// purpose: x is read twice and every access moves 2 bytes.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_bf16_seed(const __nv_bfloat16* __restrict__ x,  // [M, N]
                  const __nv_bfloat16* __restrict__ w,  // [N]
                  __nv_bfloat16* __restrict__ y,        // [M, N]
                  int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  __nv_bfloat16* yrow = y + static_cast<size_t>(row) * N;

  float local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const float v = __bfloat162float(xrow[j]);
    local += v * v;
  }
  const float rstd = rsqrtf(fk::block_sum_tree<THREADS>(local) / N + eps);

  for (int j = threadIdx.x; j < N; j += THREADS)
    yrow[j] = __float2bfloat16(__bfloat162float(xrow[j]) * rstd * __bfloat162float(w[j]));
}
