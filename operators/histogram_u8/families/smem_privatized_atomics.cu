/* forgek
{
  "name": "histogram_u8_smem_privatized_atomics",
  "mechanisms": ["smem_atomics", "vector_16B", "persistent_grid", "memory_level_parallelism"],
  "controls": {"smem_atomics": ["COPIES"], "block_size": ["THREADS"], "persistent_grid": ["CTAS_PER_SM"],
               "memory_level_parallelism": ["UNROLL"]},
  "params": {"COPIES": [32, 16, 8, 1], "THREADS": [256, 512, 128], "CTAS_PER_SM": [4, 2, 8], "UNROLL": [4, 2, 8]},
  "let": {"bins_bytes": "256*COPIES*4", "nvec": "N/16"},
  "constraints": ["N % 16 == 0", "CTAS_PER_SM*THREADS <= 2048", "CTAS_PER_SM*(bins_bytes + 1024) <= 233472",
                  "CTAS_PER_SM*THREADS*(8*UNROLL + 24) <= 65536"],
  "launches": [
    {"kernel": "histogram_u8_zero", "grid": [1], "block": [256], "args": ["hist"]},
    {"kernel": "histogram_u8_smem_privatized_atomics",
     "grid": ["max(1, min(num_sms*CTAS_PER_SM, ceil_div(nvec, THREADS)))"], "block": ["THREADS"],
     "args": ["x", "hist", "N"]}
  ]
}
*/
// 256-bin histogram of x[N] bytes: the reference's design (CUB DeviceHistogram: shared-memory
// privatised bins, shared atomics, one merge per CTA into the global bins) with its knobs as
// params and the bank layout chosen so that uniform bytes do not collide.
//   1. histogram_u8_zero: hist[256] = 0 (the output arrives poisoned; launch 2 adds into it).
//   2. a persistent grid of min(num_sms*CTAS_PER_SM, ...) CTAs streams x as 16-byte vectors:
//        x          [N] u8 viewed as [N/16] uint4 vectors (N % 16 == 0)
//        thread g   -> vectors g, g + G, g + 2G, ... (G = gridDim.x*THREADS threads in the grid);
//                      UNROLL of them loaded (one coalesced 512-byte row per warp each) before any
//                      is counted, and the next UNROLL loaded before the current ones are counted
//                      (software pipeline): UNROLL*16 bytes per thread stay in flight while it counts
//        bins       [256][COPIES] u32 in shared memory, bin-major: lane l of every warp adds into
//                      copy l % COPIES, i.e. word b*COPIES + l % COPIES, with atomicAdd (ATOMS)
//      then every CTA folds its copies into hist[b] with one global atomicAdd per non-empty bin.
// COPIES = 32 puts lane l's counters all in bank l: the 32 atomics of one warp instruction never
// share a bank (nor an address), whatever the bytes, so every ATOMS is one shared-memory
// wavefront; the copies are shared by all warps of the CTA (atomics from different instructions
// do not conflict). Fewer copies use less shared memory but let lanes with equal l % COPIES collide
// (bank conflicts for different bins, serialised atomics for equal ones); COPIES = 1 is CUB's layout.
// 32-bit counters cannot overflow: a CTA sees at most N < 2^31 bytes.
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

extern "C" __global__ void histogram_u8_zero(unsigned int* __restrict__ hist) {  // [256]
  hist[threadIdx.x] = 0u;
}

// Counts the 4 bytes of `word` into this lane's copy. Counter (bin b, copy c) sits at byte offset
// b*COPIES*4 + c*4 of bins: the bin field and `copy_offset` (c*4) do not overlap, so each address is
// a shift, a mask and an OR of the word (one 32-bit shared atomic per byte).
__device__ __forceinline__ void count_word(unsigned int* bins, unsigned int copy_offset, unsigned int word) {
  char* base = reinterpret_cast<char*>(bins);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const unsigned int offset = ((word >> (8 * j)) & 0xffu) * (COPIES * 4u) | copy_offset;
    atomicAdd(reinterpret_cast<unsigned int*>(base + offset), 1u);
  }
}

// Vectors first, first + stride, ..., first + (UNROLL-1)*stride of x (those below nvec), all issued
// before any is used: one coalesced 512-byte row per warp each.
__device__ __forceinline__ void load_batch(const unsigned char* __restrict__ x, int first, int stride, int nvec,
                                           uint4 (&v)[UNROLL]) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int idx = first + u * stride;
    if (idx < nvec) v[u] = fk::ld_global_nc_na(x + 16 * static_cast<size_t>(idx));
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
histogram_u8_smem_privatized_atomics(const unsigned char* __restrict__ x,  // [N]
                                     unsigned int* __restrict__ hist,      // [256], zeroed by launch 1
                                     int N) {
  __shared__ unsigned int bins[256 * COPIES];  // [256][COPIES]
  for (int i = threadIdx.x; i < 256 * COPIES; i += THREADS) bins[i] = 0u;
  __syncthreads();

  const int nvec = N / 16;  // N % 16 == 0 (a manifest constraint)
  const int stride = gridDim.x * THREADS;
  const unsigned int copy_offset = (threadIdx.x % kWarp % COPIES) * 4u;  // this lane's copy
  // Software pipeline: the next UNROLL vectors are loaded before the current ones are counted, so
  // loads stay in flight while the warp issues its atomics.
  int base = blockIdx.x * THREADS + threadIdx.x;
  uint4 v[UNROLL];  // [UNROLL] vectors base + u*stride
  load_batch(x, base, stride, nvec, v);
  for (; base < nvec; base += UNROLL * stride) {
    uint4 next[UNROLL];
    load_batch(x, base + UNROLL * stride, stride, nvec, next);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      if (base + u * stride < nvec) {
        count_word(bins, copy_offset, v[u].x);
        count_word(bins, copy_offset, v[u].y);
        count_word(bins, copy_offset, v[u].z);
        count_word(bins, copy_offset, v[u].w);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = next[u];
  }
  __syncthreads();

  // Merge: thread b sums the COPIES counters of bin b, starting at copy b % COPIES so that the 32
  // threads of a warp read 32 different banks, and adds the total into hist[b].
  for (int b = threadIdx.x; b < 256; b += THREADS) {
    unsigned int total = 0u;
#pragma unroll 8
    for (int c = 0; c < COPIES; ++c) total += bins[b * COPIES + (c + b) % COPIES];
    if (total != 0u) atomicAdd(hist + b, total);
  }
}
