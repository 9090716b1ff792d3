/* forgek
{
  "name": "reduce_sum_rows_block_tree",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "reduce_sum_rows_seed", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per row, whatever N is. Each thread sums a
// strided share with scalar 4-byte loads; a shared-memory tree adds the partial sums.
// Correct for any M, N. Left slow on purpose: for N = 128 three quarters of the CTA load nothing
// and every row pays log2(THREADS) barriers; for large N, one CTA per row with scalar loads keeps
// too few bytes in flight per SM.
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_sum_rows_seed(const float* __restrict__ x,  // [M, N] row-major
                     float* __restrict__ y,        // [M]
                     int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;

  float sum = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) sum += xrow[j];
  sum = fk::block_sum_tree<THREADS>(sum);
  if (threadIdx.x == 0) y[row] = sum;
}
