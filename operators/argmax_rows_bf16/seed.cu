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

extern "C" __global__ void __launch_bounds__(THREADS)
argmax_rows_seed(const __nv_bfloat16* __restrict__ x,  // [M, N] row-major
                 int* __restrict__ y,                  // [M]
                 int M, int N) {
  __shared__ float best_value[THREADS];  // [THREADS] halved each step (THREADS = 2^k)
  __shared__ int best_column[THREADS];
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
  best_value[threadIdx.x] = v;
  best_column[threadIdx.x] = j;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const float ov = best_value[threadIdx.x + width];
      const int oj = best_column[threadIdx.x + width];
      if (ov > best_value[threadIdx.x] || (ov == best_value[threadIdx.x] && oj < best_column[threadIdx.x])) {
        best_value[threadIdx.x] = ov;
        best_column[threadIdx.x] = oj;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = best_column[0];
}
