/* forgek
{
  "name": "fused_add_rmsnorm_block_row_two_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "fused_add_rmsnorm_bf16_seed", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "residual", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, two passes over the row.
//   pass 1: r = x + residual; residual <- bf16(r); sum of r^2     (reads x, residual; writes residual)
//   pass 2: y = residual * rstd * w                                (reads residual again, writes y)
// Pass 2 normalises the stored (bf16-rounded) residual, as vLLM does. Each thread re-reads only
// the elements it wrote itself, so no barrier is needed between the store and the re-read.
// Scalar 2-byte accesses and a shared-memory tree reduction; left slow on purpose.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
fused_add_rmsnorm_bf16_seed(const __nv_bfloat16* __restrict__ x,  // [M, N]
                            __nv_bfloat16* __restrict__ residual, // [M, N], updated in place
                            const __nv_bfloat16* __restrict__ w,  // [N]
                            __nv_bfloat16* __restrict__ y,        // [M, N]
                            int M, int N, float eps) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  __nv_bfloat16* rrow = residual + static_cast<size_t>(row) * N;
  __nv_bfloat16* yrow = y + static_cast<size_t>(row) * N;

  float local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) {
    const __nv_bfloat16 r = __float2bfloat16(__bfloat162float(xrow[j]) + __bfloat162float(rrow[j]));
    rrow[j] = r;
    const float rf = __bfloat162float(r);
    local += rf * rf;
  }
  const float rstd = rsqrtf(fk::block_sum_tree<THREADS>(local) / N + eps);

  for (int j = threadIdx.x; j < N; j += THREADS)
    yrow[j] = __float2bfloat16(__bfloat162float(rrow[j]) * rstd * __bfloat162float(w[j]));
}
