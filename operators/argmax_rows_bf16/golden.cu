/* forgek
{
  "name": "argmax_rows_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "argmax_rows_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// The truth for argmax_rows_bf16: one CTA per row. Each thread walks a strided share of the row
// keeping its best (value, column); a shared-memory tree merges the THREADS candidates. A max is
// exact in any precision, so the only rule that matters is the tie rule: on equal values the lower
// column wins, applied both within a thread and in the tree, which makes the result the first
// occurrence of the row maximum whatever the order of the merges.
#include <cuda_bf16.h>

// True when candidate (v, j) beats (best_v, best_j): larger value, or equal value at a lower column.
__device__ bool beats(float v, int j, float best_v, int best_j) {
  return v > best_v || (v == best_v && j < best_j);
}

extern "C" __global__ void __launch_bounds__(THREADS)
argmax_rows_golden(const __nv_bfloat16* __restrict__ x,  // [M, N] row-major
                   int* __restrict__ y,                  // [M] column of the first maximum
                   int M, int N) {
  __shared__ float best_value[THREADS];  // [THREADS] halved each step (THREADS = 2^k)
  __shared__ int best_column[THREADS];
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;

  float v = __int_as_float(0xff800000);  // -inf: any real value beats it
  int j = N;                              // past the end: any real column beats it on a tie
  for (int c = threadIdx.x; c < N; c += THREADS) {
    const float value = __bfloat162float(xrow[c]);
    if (beats(value, c, v, j)) v = value, j = c;
  }
  best_value[threadIdx.x] = v;
  best_column[threadIdx.x] = j;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const int other = threadIdx.x + width;
      if (beats(best_value[other], best_column[other], best_value[threadIdx.x], best_column[threadIdx.x])) {
        best_value[threadIdx.x] = best_value[other];
        best_column[threadIdx.x] = best_column[other];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = best_column[0];
}
