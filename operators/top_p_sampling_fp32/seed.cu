/* forgek
{
  "name": "top_p_sampling_binary_search",
  "mechanisms": ["block_scan", "smem_tree_reduction"],
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "top_p_sampling_seed", "grid": ["M"], "block": ["THREADS"], "args": ["logits", "u", "samples", "top_p", "M", "V"]}
  ]
}
*/
// A plain starting point: one CTA per row, fp32 throughout.
//   1. max, then W = sum of exp(x - max)                                 (2 passes)
//   2. theta by binary search over the 2^32 order-preserving keys: the largest key whose mass
//      (sum of exp(x - max) over logits with key >= it) reaches top_p * W   (32 passes)
//   3. Z = mass(theta); walk the row in column order, THREADS columns at a time, with a block
//      exclusive scan of the nucleus weights; the first column whose running sum exceeds u * Z
//      wins; if none, the last nucleus column.
// Correct for any M, V. Left slow on purpose: about 36 passes over the 501 KiB row with scalar loads
// and an exp per element per pass; a radix select finds theta in 4 passes.
#include <cub/block/block_scan.cuh>
#include <forgek/reduce.cuh>

__device__ __forceinline__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ float mass_from(const float* row, int V, float row_max, unsigned long long min_key) {
  float local = 0.f;
  for (int j = threadIdx.x; j < V; j += THREADS)
    if (order_key(row[j]) >= min_key) local += expf(row[j] - row_max);
  return fk::block_sum_tree<THREADS>(local);
}

extern "C" __global__ void __launch_bounds__(THREADS)
top_p_sampling_seed(const float* __restrict__ logits,  // [M, V] row-major
                    const float* __restrict__ u,       // [M]
                    int* __restrict__ samples,         // [M]
                    float top_p, int M, int V) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  __shared__ typename BlockScan::TempStorage scan_temp;
  __shared__ int found, last_in_nucleus;
  const int i = blockIdx.x;
  if (i >= M) return;
  const float* row = logits + static_cast<size_t>(i) * V;

  float local_max = __int_as_float(0xff800000);
  for (int j = threadIdx.x; j < V; j += THREADS) local_max = fmaxf(local_max, row[j]);
  const float row_max = fk::block_max_tree<THREADS>(local_max);
  const float needed = top_p * mass_from(row, V, row_max, 0);

  // Invariant: mass(lo) >= needed > mass(hi); every thread computes the same block-reduced masses.
  unsigned long long lo = 0, hi = 1ull << 32;
  while (hi - lo > 1) {
    const unsigned long long mid = (lo + hi) / 2;
    if (mass_from(row, V, row_max, mid) >= needed) lo = mid;
    else hi = mid;
  }
  const unsigned theta_key = static_cast<unsigned>(lo);
  const float r = u[i] * mass_from(row, V, row_max, theta_key);

  if (threadIdx.x == 0) found = V, last_in_nucleus = -1;
  __syncthreads();
  float running = 0.f;  // nucleus mass of the chunks before this one
  for (int c0 = 0; c0 < V; c0 += THREADS) {
    const int j = c0 + threadIdx.x;
    const bool in = j < V && order_key(row[j]) >= theta_key;
    const float w = in ? expf(row[j] - row_max) : 0.f;
    float before, chunk_total;
    BlockScan(scan_temp).ExclusiveSum(w, before, chunk_total);
    if (in) {
      atomicMax(&last_in_nucleus, j);
      if (running + before + w > r) atomicMin(&found, j);
    }
    running += chunk_total;
    __syncthreads();
    if (found < V) break;  // block-uniform after the barrier
  }
  if (threadIdx.x == 0) samples[i] = found < V ? found : last_in_nucleus;
}
