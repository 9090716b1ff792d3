/* forgek
{
  "name": "softmax_block_row_three_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "softmax_fp32_seed", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
#include <forgek/reduce.cuh>

// A plain starting point: one CTA of THREADS threads per row, three passes over the row.
//   pass 1: row max          (reads x)
//   pass 2: sum of exp(x - max)  (reads x again)
//   pass 3: y = exp(x - max) / sum  (reads x a third time, writes y)
// Scalar 4-byte accesses, shared-memory tree reductions, accurate expf. Correct for any M, N;
// left slow on purpose: x is read three times and every reduction walks log2(THREADS) barriers.

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_fp32_seed(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  float local_max = __int_as_float(0xff800000);  // -inf
  for (int j = threadIdx.x; j < N; j += THREADS) local_max = fmaxf(local_max, xrow[j]);
  const float row_max = fk::block_max_tree<THREADS>(local_max);

  float local_sum = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) local_sum += expf(xrow[j] - row_max);
  const float row_sum = fk::block_sum_tree<THREADS>(local_sum);

  for (int j = threadIdx.x; j < N; j += THREADS) yrow[j] = expf(xrow[j] - row_max) / row_sum;
}
