/* forgek
{
  "name": "topk_rows_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "topk_rows_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "values", "indices", "M", "N", "K"]}
  ]
}
*/
// The truth for topk_rows_fp32: one CTA per row, K rounds. The row's elements are totally ordered
// by (value descending, column ascending); round r finds the first element of that order that
// comes after the element picked in round r-1, by a full pass over the row (each thread keeps its
// best, a shared-memory tree merges them). K full passes: slow, and plainly right.

// True when (v, j) comes before (w, k) in the order: larger value, or equal value at a lower column.
__device__ bool before(float v, int j, float w, int k) { return v > w || (v == w && j < k); }

extern "C" __global__ void __launch_bounds__(THREADS)
topk_rows_golden(const float* __restrict__ x,  // [M, N] row-major
                 float* __restrict__ values,   // [M, K] descending
                 int* __restrict__ indices,    // [M, K]
                 int M, int N, int K) {
  __shared__ float best_value[THREADS];  // [THREADS] halved each step (THREADS = 2^k)
  __shared__ int best_column[THREADS];
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;

  float last_v = __int_as_float(0x7f800000);  // +inf at column -1: every element comes after it
  int last_j = -1;
  for (int r = 0; r < K; ++r) {
    float v = __int_as_float(0xff800000);  // -inf at column N: comes after every element
    int j = N;
    for (int c = threadIdx.x; c < N; c += THREADS) {
      const float value = xrow[c];
      if (before(last_v, last_j, value, c) && before(value, c, v, j)) v = value, j = c;
    }
    best_value[threadIdx.x] = v;
    best_column[threadIdx.x] = j;
    __syncthreads();
    for (int width = THREADS / 2; width > 0; width /= 2) {
      if (threadIdx.x < width) {
        const int other = threadIdx.x + width;
        if (before(best_value[other], best_column[other], best_value[threadIdx.x], best_column[threadIdx.x])) {
          best_value[threadIdx.x] = best_value[other];
          best_column[threadIdx.x] = best_column[other];
        }
      }
      __syncthreads();
    }
    last_v = best_value[0];
    last_j = best_column[0];
    if (threadIdx.x == 0) {
      values[static_cast<size_t>(row) * K + r] = last_v;
      indices[static_cast<size_t>(row) * K + r] = last_j;
    }
    __syncthreads();  // best_* is rewritten by the next round
  }
}
