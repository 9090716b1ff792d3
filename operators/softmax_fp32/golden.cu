/* forgek
{
  "name": "softmax_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "softmax_fp32_golden", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// The truth for softmax_fp32: one CTA per row, every step in fp64, the result rounded once to fp32.
//   max:  exact in any precision (a max never rounds).
//   sum:  sum of exp((double)x - max) in fp64; each thread sums a strided share, then a shared-
//         memory tree adds the THREADS partial sums.
//   y:    exp((double)x - max) / sum in fp64, rounded to float on store.
// No fast-math intrinsics, no vector loads: clarity over speed.

__device__ double block_reduce(double value, bool take_max) {
  __shared__ double partial[THREADS];  // [THREADS] one value per thread, halved each step (THREADS = 2^k)
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const double other = partial[threadIdx.x + width];
      partial[threadIdx.x] = take_max ? fmax(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const double result = partial[0];
  __syncthreads();  // partial[] is reused by the next call
  return result;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_fp32_golden(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  double local_max = -1.0 / 0.0;  // -inf
  for (int j = threadIdx.x; j < N; j += THREADS) local_max = fmax(local_max, static_cast<double>(xrow[j]));
  const double row_max = block_reduce(local_max, true);

  double local_sum = 0.0;
  for (int j = threadIdx.x; j < N; j += THREADS) local_sum += exp(static_cast<double>(xrow[j]) - row_max);
  const double row_sum = block_reduce(local_sum, false);

  for (int j = threadIdx.x; j < N; j += THREADS)
    yrow[j] = static_cast<float>(exp(static_cast<double>(xrow[j]) - row_max) / row_sum);
}
