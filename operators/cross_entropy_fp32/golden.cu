/* forgek
{
  "name": "cross_entropy_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "cross_entropy_golden", "grid": ["T"], "block": ["THREADS"], "args": ["logits", "targets", "loss", "T", "V"]}
  ]
}
*/
// The truth for cross_entropy_fp32: one CTA per token, every step in fp64, rounded once to fp32.
//   max:  exact in any precision;
//   sum:  sum of exp((double)x - max) in fp64 (strided per thread, then a shared-memory tree);
//   loss: max + log(sum) - x[target].

__device__ double block_reduce(double value, bool take_max) {
  __shared__ double partial[THREADS];  // [THREADS] halved each step (THREADS = 2^k)
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
cross_entropy_golden(const float* __restrict__ logits,  // [T, V] row-major
                     const int* __restrict__ targets,   // [T], each in [0, V)
                     float* __restrict__ loss,          // [T]
                     int T, int V) {
  const int t = blockIdx.x;
  if (t >= T) return;
  const float* row = logits + static_cast<size_t>(t) * V;

  double local_max = -1.0 / 0.0;
  for (int j = threadIdx.x; j < V; j += THREADS) local_max = fmax(local_max, static_cast<double>(row[j]));
  const double row_max = block_reduce(local_max, true);

  double local_sum = 0.0;
  for (int j = threadIdx.x; j < V; j += THREADS) local_sum += exp(static_cast<double>(row[j]) - row_max);
  const double row_sum = block_reduce(local_sum, false);

  if (threadIdx.x == 0) {
    const double target_logit = row[targets[t]];
    loss[t] = static_cast<float>(row_max + log(row_sum) - target_logit);
  }
}
