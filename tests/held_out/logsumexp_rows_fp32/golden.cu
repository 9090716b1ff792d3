/* forgek
{
  "name": "logsumexp_rows_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "logsumexp_rows_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// The truth for logsumexp_rows_fp32: one CTA per row, max and sum of exp(x - max) in fp64 with an
// accurate exp, shared-memory trees, rounded once to fp32.

extern "C" __global__ void __launch_bounds__(THREADS)
logsumexp_rows_golden(const float* __restrict__ x,  // [M, N] row-major
                      float* __restrict__ y,        // [M]
                      int M, int N) {
  __shared__ double partial[THREADS];  // [THREADS] one value per thread, halved each step
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;

  double m = -1e300;
  for (int j = threadIdx.x; j < N; j += THREADS) m = fmax(m, static_cast<double>(xrow[j]));
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] = fmax(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  const double row_max = partial[0];
  __syncthreads();

  double s = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) s += exp(static_cast<double>(xrow[j]) - row_max);
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = static_cast<float>(row_max + log(partial[0]));
}
