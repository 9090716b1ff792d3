/* forgek
{
  "name": "histogram_u8_smem_atomics",
  "mechanisms": ["smem_atomics"],
  "params": {"BLOCKS": 1056, "THREADS": 512},
  "constraints": ["N % 4 == 0"],
  "launches": [
    {"kernel": "histogram_u8_seed_zero",  "grid": [1],        "block": [256],       "args": ["hist"]},
    {"kernel": "histogram_u8_seed_count", "grid": ["BLOCKS"], "block": ["THREADS"], "args": ["x", "hist", "N"]}
  ]
}
*/
// A plain starting point in two launches:
//   1. zero hist[256] (it arrives poisoned);
//   2. a grid-stride loop over x as 4-byte words (4 bins per load) into one shared 256-bin
//      histogram per CTA, then one global atomicAdd per bin per CTA.
// Correct for any N that is a multiple of 4. Left slow on purpose: every thread of a CTA shares one
// shared histogram, so bytes of equal value collide on the same shared-memory word (atomics
// serialise), and 4-byte loads keep few bytes in flight; per-warp sub-histograms and 16-byte loads
// would do better.

extern "C" __global__ void histogram_u8_seed_zero(unsigned int* __restrict__ hist) {  // [256]
  hist[threadIdx.x] = 0;
}

extern "C" __global__ void __launch_bounds__(THREADS)
histogram_u8_seed_count(const unsigned int* __restrict__ x,  // [N/4] words, 4 bytes each
                        unsigned int* __restrict__ hist,     // [256], zeroed by the first launch
                        int N) {
  __shared__ unsigned int bins[256];
  for (int b = threadIdx.x; b < 256; b += THREADS) bins[b] = 0;
  __syncthreads();
  const int words = N / 4;
  for (int i = blockIdx.x * THREADS + threadIdx.x; i < words; i += BLOCKS * THREADS) {
    const unsigned int w = x[i];
    atomicAdd(&bins[w & 0xff], 1u);
    atomicAdd(&bins[(w >> 8) & 0xff], 1u);
    atomicAdd(&bins[(w >> 16) & 0xff], 1u);
    atomicAdd(&bins[w >> 24], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += THREADS)
    if (bins[b] != 0) atomicAdd(&hist[b], bins[b]);
}
