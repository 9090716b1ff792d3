/* forgek
{
  "name": "top_p_sampling_golden_fp64",
  "params": {"THREADS": 256},
  "workspaces": [{"name": "weight", "bytes": "8*M*V", "zero": false}],
  "launches": [
    {"kernel": "top_p_sampling_golden_weights", "grid": ["M"], "block": ["THREADS"], "args": ["logits", "weight", "M", "V"]},
    {"kernel": "top_p_sampling_golden", "grid": ["M"], "block": ["THREADS"], "args": ["logits", "weight", "u", "samples", "top_p", "M", "V"]}
  ]
}
*/
// The truth for top_p_sampling_fp32: one CTA per row, every mass in fp64, two launches.
//   0. weight[i][j] = w_j = exp((double)x_j - max) in an fp64 workspace, so that the search below
//      (which would otherwise call exp 34 times per logit, and spill around the calls) only adds.
//   1. W = sum of w_j.
//   2. theta: the largest logit value t with mass(t) = sum of w_j over x_j >= t at least top_p*W.
//      Logits are compared through their order-preserving 32-bit keys, and theta's key is found by
//      a binary search over all 2^32 keys: mass() only changes at the keys of the row's logits, so
//      the largest key whose mass reaches top_p*W is the key of a logit. 32 passes over the row.
//   3. Z = mass(theta); r = u * Z.
//   4. The first column c with x_c >= theta whose running sum of w over nucleus columns <= c
//      exceeds r, found chunk by chunk in column order with a shared-memory inclusive scan;
//      if none (r rounded up to the total), the last nucleus column.

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned integers.
__device__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ double block_reduce(double value, bool take_max) {
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

// Sum of w_j over the logits of the row whose key is >= min_key.
__device__ __forceinline__ double mass_from(const float* row, const double* w, int V, unsigned long long min_key) {
  double local = 0.0;
  for (int j = threadIdx.x; j < V; j += THREADS)
    if (order_key(row[j]) >= min_key) local += w[j];
  return block_reduce(local, false);
}

extern "C" __global__ void __launch_bounds__(THREADS)
top_p_sampling_golden_weights(const float* __restrict__ logits,  // [M, V] row-major
                              double* __restrict__ weight,       // [M, V] exp(x - row max)
                              int M, int V) {
  const int i = blockIdx.x;
  if (i >= M) return;
  const float* row = logits + static_cast<size_t>(i) * V;
  double local_max = -1.0 / 0.0;
  for (int j = threadIdx.x; j < V; j += THREADS) local_max = fmax(local_max, static_cast<double>(row[j]));
  const double row_max = block_reduce(local_max, true);
  for (int j = threadIdx.x; j < V; j += THREADS)
    weight[static_cast<size_t>(i) * V + j] = exp(static_cast<double>(row[j]) - row_max);
}

extern "C" __global__ void __launch_bounds__(THREADS)
top_p_sampling_golden(const float* __restrict__ logits,  // [M, V] row-major
                      const double* __restrict__ weight, // [M, V] from the first launch
                      const float* __restrict__ u,       // [M] uniform draws in (0, 1]
                      int* __restrict__ samples,         // [M] sampled column
                      float top_p, int M, int V) {
  __shared__ double scan[THREADS];  // [THREADS] inclusive scan of one chunk
  __shared__ int found;             // first column past r in this chunk, or V
  __shared__ int last_in_nucleus;
  const int i = blockIdx.x;
  if (i >= M) return;
  const float* row = logits + static_cast<size_t>(i) * V;
  const double* w = weight + static_cast<size_t>(i) * V;
  const double total = mass_from(row, w, V, 0);
  const double needed = static_cast<double>(top_p) * total;

  // Invariant: mass(lo) >= needed > mass(hi). mass(0) = W >= needed; mass(2^32) = 0 < needed.
  // The search state lives in shared memory; thread 0 updates it after each block-wide mass.
  __shared__ unsigned long long lo, hi;
  if (threadIdx.x == 0) lo = 0, hi = 1ull << 32;
  __syncthreads();
  while (hi - lo > 1) {
    const unsigned long long mid = (lo + hi) / 2;
    const bool reaches = mass_from(row, w, V, mid) >= needed;  // block-uniform
    if (threadIdx.x == 0) { if (reaches) lo = mid; else hi = mid; }
    __syncthreads();
  }
  const unsigned theta_key = static_cast<unsigned>(lo);
  const double r = static_cast<double>(u[i]) * mass_from(row, w, V, theta_key);

  if (threadIdx.x == 0) found = V, last_in_nucleus = -1;
  __syncthreads();  // initialised before any thread's atomics
  double running = 0.0;  // nucleus mass of the chunks before this one
  for (int c0 = 0; c0 < V; c0 += THREADS) {
    const int j = c0 + threadIdx.x;
    const bool in = j < V && order_key(row[j]) >= theta_key;
    scan[threadIdx.x] = in ? w[j] : 0.0;
    if (in) atomicMax(&last_in_nucleus, j);
    __syncthreads();
    for (int step = 1; step < THREADS; step *= 2) {  // Hillis-Steele inclusive scan
      const double add = threadIdx.x >= step ? scan[threadIdx.x - step] : 0.0;
      __syncthreads();
      scan[threadIdx.x] += add;
      __syncthreads();
    }
    if (in && running + scan[threadIdx.x] > r) atomicMin(&found, j);
    running += scan[THREADS - 1];
    __syncthreads();
    if (found < V) break;  // uniform: every thread reads the same shared value after the barrier
  }
  if (threadIdx.x == 0) samples[i] = found < V ? found : last_in_nucleus;
}
