/* forgek
{
  "name": "logsumexp_rows_two_pass",
  "mechanisms": ["warp_shuffle_reduction"],
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "logsumexp_rows_reference", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// The expert reference: one CTA of 256 threads per row, two passes over the row (the max, then
// the sum of exp(x - max)), each reduced with warp shuffles and one shared-memory step.

#define kNegInf __int_as_float(0xff800000)  // -inf

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float warp_part[THREADS / 32];  // [THREADS/32] one value per warp
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  v = lane < THREADS / 32 ? warp_part[lane] : (is_max ? kNegInf : 0.f);
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  __syncthreads();  // warp_part is reused by the next call
  return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
logsumexp_rows_reference(const float* __restrict__ x,  // [M, N] row-major
                         float* __restrict__ y,        // [M]
                         int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float m = kNegInf;
  for (int j = threadIdx.x; j < N; j += THREADS) m = fmaxf(m, xrow[j]);
  const float row_max = block_reduce(m, true);
  float s = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) s += expf(xrow[j] - row_max);
  const float sum = block_reduce(s, false);
  if (threadIdx.x == 0) y[row] = row_max + logf(sum);
}
