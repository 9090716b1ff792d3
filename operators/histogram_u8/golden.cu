/* forgek
{
  "name": "histogram_u8_golden",
  "params": {"BLOCKS": 4096, "THREADS": 256},
  "workspaces": [{"name": "partial", "bytes": "4*BLOCKS*256", "zero": false}],
  "launches": [
    {"kernel": "histogram_u8_golden_partial", "grid": ["BLOCKS"], "block": ["THREADS"], "args": ["x", "partial", "N"]},
    {"kernel": "histogram_u8_golden_total",   "grid": [1],        "block": [256],       "args": ["partial", "hist"]}
  ]
}
*/
// The truth for histogram_u8: two launches, no global atomics, so the counts do not depend on
// timing.
//   1. CTA b counts the bytes of its contiguous chunk x[b*chunk, (b+1)*chunk) into a shared
//      256-bin histogram and writes all 256 bins to partial[b][0..256) (every entry written, so
//      the workspace needs no zeroing).
//   2. One CTA of 256 threads: thread v sums column v of partial over the BLOCKS rows into hist[v].

extern "C" __global__ void __launch_bounds__(THREADS)
histogram_u8_golden_partial(const unsigned char* __restrict__ x,  // [N]
                            unsigned int* __restrict__ partial,   // [BLOCKS, 256]
                            int N) {
  __shared__ unsigned int bins[256];
  for (int b = threadIdx.x; b < 256; b += THREADS) bins[b] = 0;
  __syncthreads();
  const long long chunk = (static_cast<long long>(N) + BLOCKS - 1) / BLOCKS;
  const long long begin = blockIdx.x * chunk;
  const long long end = begin + chunk < N ? begin + chunk : N;
  for (long long i = begin + threadIdx.x; i < end; i += THREADS) atomicAdd(&bins[x[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += THREADS) partial[static_cast<size_t>(blockIdx.x) * 256 + b] = bins[b];
}

extern "C" __global__ void __launch_bounds__(256)
histogram_u8_golden_total(const unsigned int* __restrict__ partial,  // [BLOCKS, 256]
                          unsigned int* __restrict__ hist) {         // [256]
  const int bin = threadIdx.x;
  unsigned int total = 0;
  for (int b = 0; b < BLOCKS; ++b) total += partial[static_cast<size_t>(b) * 256 + bin];
  hist[bin] = total;
}
