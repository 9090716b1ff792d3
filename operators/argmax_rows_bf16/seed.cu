/* forgek
{
  "name": "argmax_rows_block_scalar",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "argmax_rows_seed", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, scalar 2-byte loads, each thread
// keeping its best (value, column), then a shared-memory tree. Ties go to the lower column at every
// step, so the result is the first occurrence of the maximum.
// Correct for any M, N. Left slow on purpose: 2-byte loads move few bytes per instruction and the
// tree walks log2(THREADS) barriers; 16-byte loads of 8 bf16 and warp shuffles would do better.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
argmax_rows_seed(const __nv_bfloat16* __restrict__ x,  // [M, N] row-major
                 int* __restrict__ y,                  // [M]
                 int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;

  // Columns grow along a thread's walk, so a strict '>' keeps the first of equal values.
  float v = __int_as_float(0xff800000);  // -inf
  int j = N;
  for (int c = threadIdx.x; c < N; c += THREADS) {
    const float value = __bfloat162float(xrow[c]);
    if (value > v) v = value, j = c;
  }
  fk::block_argmax_tree<THREADS>(v, j);
  if (threadIdx.x == 0) y[row] = j;
}
