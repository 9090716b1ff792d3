/* forgek
{
  "name": "reduce_sum_rows_golden_fp64",
  "params": {"THREADS": 128},
  "launches": [
    {"kernel": "reduce_sum_rows_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// The truth for reduce_sum_rows_fp32: one CTA per row, the sum in fp64, rounded once to fp32.
// Each thread adds a strided share of the row in fp64; a shared-memory tree adds the THREADS
// partial sums. fp64 keeps the rounding error (~2^-53 per add) far below the fp32 output ulp.

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_sum_rows_golden(const float* __restrict__ x,  // [M, N] row-major
                       float* __restrict__ y,        // [M]
                       int M, int N) {
  __shared__ double partial[THREADS];  // [THREADS] one sum per thread, halved each step (THREADS = 2^k)
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;

  double sum = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) sum += static_cast<double>(xrow[j]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = static_cast<float>(partial[0]);
}
