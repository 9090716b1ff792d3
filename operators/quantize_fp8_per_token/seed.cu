/* forgek
{
  "name": "quantize_fp8_block_row_two_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "quantize_fp8_per_token_seed", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "q", "scales", "M", "N"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, two passes over the row.
//   pass 1: amax = max |x|                      (reads x)
//   pass 2: q = e4m3(x / scale), saturating     (reads x again, writes q one byte at a time)
// The __nv_fp8_e4m3 constructor rounds to nearest and saturates to +-448. Correct for any M, N;
// left slow on purpose: x is read twice, accesses are 1-2 bytes, and the division is exact.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
quantize_fp8_per_token_seed(const __nv_bfloat16* __restrict__ x,  // [M, N]
                            __nv_fp8_e4m3* __restrict__ q,        // [M, N]
                            float* __restrict__ scales,           // [M]
                            int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  __nv_fp8_e4m3* qrow = q + static_cast<size_t>(row) * N;

  float local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) local = fmaxf(local, fabsf(__bfloat162float(xrow[j])));
  const float scale = fmaxf(fk::block_max_tree<THREADS>(local) / 448.f, 1.f / (448.f * 512.f));

  for (int j = threadIdx.x; j < N; j += THREADS) qrow[j] = __nv_fp8_e4m3(__bfloat162float(xrow[j]) / scale);
  if (threadIdx.x == 0) scales[row] = scale;
}
