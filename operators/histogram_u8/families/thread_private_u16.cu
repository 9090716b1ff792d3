/* forgek
{
  "name": "histogram_u8_thread_private_u16",
  "mechanisms": ["vector_16B", "persistent_grid", "memory_level_parallelism", "warp_shuffle_reduction"],
  "controls": {"persistent_grid": ["CTAS_PER_SM"], "memory_level_parallelism": ["UNROLL"]},
  "params": {"CTAS_PER_SM": [3, 2, 1], "UNROLL": [8, 4, 2], "THREADS": 128},
  "let": {"counters_bytes": "256*THREADS*2", "nvec": "N/16"},
  "constraints": ["N % 16 == 0", "CTAS_PER_SM*(counters_bytes + 1024) <= 233472",
                  "CTAS_PER_SM*THREADS*(8*UNROLL + 32) <= 65536"],
  "launches": [
    {"kernel": "histogram_u8_private_zero", "grid": [1], "block": [256], "args": ["hist"]},
    {"kernel": "histogram_u8_thread_private_u16",
     "grid": ["min(num_sms*CTAS_PER_SM, ceil_div(nvec, THREADS))"], "block": ["THREADS"], "smem": "counters_bytes",
     "args": ["x", "hist", "N"]}
  ]
}
*/
// 256-bin histogram of x[N] bytes with NO atomics in the counting loop: every thread owns a private
// histogram of 16-bit counters in shared memory and updates it with plain loads and stores, so no
// two threads ever touch the same counter and the shared-memory atomic unit (the reference's
// bottleneck) is not used at all; counters are folded into hist before they can overflow.
//   1. histogram_u8_private_zero: hist[256] = 0 (the output arrives poisoned; launch 2 adds into it).
//   2. a persistent grid of min(num_sms*CTAS_PER_SM, ...) CTAs of THREADS = 128 threads:
//        x          [N] u8 viewed as [N/16] uint4 vectors (N % 16 == 0)
//        thread g   -> vectors g, g + G, g + 2G, ... (G = gridDim.x*128 threads), UNROLL loaded
//                      (coalesced 512-byte rows per warp) before any is counted, the next UNROLL
//                      loaded before the current ones are counted (software pipeline)
//        counters   [256][128] u16 in shared memory (64 KiB), one row per bin, one column per
//                      thread: counter (bin b, thread t) at byte (b << 8) | col(t), where lane l of
//                      warp w has col = (w >> 1)*128 + 4l + 2*(w & 1): the 32 lanes of a warp sit in
//                      32 different banks (bank l), so an access is conflict-free whatever rows the
//                      lanes' bytes pick (2t would put lanes 2i, 2i+1 in one bank and conflict
//                      whenever their rows differ). col < 256 makes the address one byte permute of
//                      the data word: [col, b, 0, 0].
//        rounds     each thread counts at most 4095 vectors (65520 bytes < 2^16) per round; after a
//                      round (CTA-uniform; one round for N = 2^30) the CTA folds the counters into
//                      hist and zeroes them: warp w takes bins w, w+4, ...; lane l reads 4 columns
//                      of the bin's row (8 bytes, the warp reads the whole 256-byte row),
//                      __reduce_add_sync sums the warp, lane 0 adds into hist[b].
// Per data word the four counters are loaded before any is stored, so four shared loads overlap
// instead of forming a chain of load -> add -> store per byte. A byte equal to earlier bytes of the
// same word adds their increments too, so the last store to a repeated counter holds them all.
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;
static_assert(THREADS == 128, "counter (b, t) at byte (b << 8) | col(t) needs col(t) < 256");
// Vectors a thread counts between folds: at most 16 * 4095 = 65520 increments per 16-bit counter.
constexpr int kRoundVecs = (65535 / 16) / UNROLL * UNROLL;

extern "C" __global__ void histogram_u8_private_zero(unsigned int* __restrict__ hist) {  // [256]
  hist[threadIdx.x] = 0u;
}

// Counts the 4 bytes of `word` into this thread's column (`self` = col(threadIdx.x), below 256).
__device__ __forceinline__ void count_word(unsigned char* counters, unsigned int self, unsigned int word) {
  // Byte addresses [self, b_j, 0, 0]: byte 4 of the permute source is `self`, byte 5 is zero.
  const unsigned int a0 = __byte_perm(word, self, 0x5504);
  const unsigned int a1 = __byte_perm(word, self, 0x5514);
  const unsigned int a2 = __byte_perm(word, self, 0x5524);
  const unsigned int a3 = __byte_perm(word, self, 0x5534);
  unsigned short* p0 = reinterpret_cast<unsigned short*>(counters + a0);
  unsigned short* p1 = reinterpret_cast<unsigned short*>(counters + a1);
  unsigned short* p2 = reinterpret_cast<unsigned short*>(counters + a2);
  unsigned short* p3 = reinterpret_cast<unsigned short*>(counters + a3);
  const unsigned int c0 = *p0, c1 = *p1, c2 = *p2, c3 = *p3;  // all four loads before any store
  *p0 = static_cast<unsigned short>(c0 + 1u);
  *p1 = static_cast<unsigned short>(c1 + 1u + (a1 == a0));
  *p2 = static_cast<unsigned short>(c2 + 1u + (a2 == a0) + (a2 == a1));
  *p3 = static_cast<unsigned short>(c3 + 1u + (a3 == a0) + (a3 == a1) + (a3 == a2));
}

// Vectors first, first + stride, ..., first + (UNROLL-1)*stride of x (those below `limit`), all
// issued before any is used: one coalesced 512-byte row per warp each.
__device__ __forceinline__ void load_batch(const unsigned char* __restrict__ x, int first, int stride, int limit,
                                           uint4 (&v)[UNROLL]) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int idx = first + u * stride;
    if (idx < limit) v[u] = fk::ld_global_nc_na(x + 16 * static_cast<size_t>(idx));
  }
}

// The whole CTA (between barriers): hist[b] += sum of every thread's counter b; counters -> 0.
__device__ __forceinline__ void fold_counters(unsigned char* counters, unsigned int* __restrict__ hist) {
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (int b = warp; b < 256; b += kWarps) {
    uint2* four = reinterpret_cast<uint2*>(counters + (b << 8) + 8 * lane);  // 4 of the row's columns
    const uint2 c = *four;
    const unsigned int mine = (c.x & 0xffffu) + (c.x >> 16) + (c.y & 0xffffu) + (c.y >> 16);
    const unsigned int total = __reduce_add_sync(0xffffffffu, mine);
    if (lane == 0 && total != 0u) atomicAdd(hist + b, total);
    *four = make_uint2(0u, 0u);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
histogram_u8_thread_private_u16(const unsigned char* __restrict__ x,  // [N]
                                unsigned int* __restrict__ hist,      // [256], zeroed by launch 1
                                int N) {
  extern __shared__ __align__(16) unsigned char counters[];  // [256][THREADS] u16
  for (int i = threadIdx.x; i < 256 * THREADS * 2 / 16; i += THREADS)
    reinterpret_cast<uint4*>(counters)[i] = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();

  const int nvec = N / 16;  // N % 16 == 0 (a manifest constraint)
  const int stride = gridDim.x * THREADS;
  const int first = blockIdx.x * THREADS + threadIdx.x;
  const unsigned int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const unsigned int self = (warp >> 1) * 128u + lane * 4u + (warp & 1u) * 2u;  // col(t): bank = lane
  const int round_span = kRoundVecs * stride;  // vectors the grid covers in one round
  for (int round = 0; round < nvec; round += round_span) {  // the same trip count in every thread
    // Software pipeline: the next UNROLL vectors (of this round) are loaded before the current
    // ones are counted, so loads stay in flight while the thread counts.
    int base = round + first;
    uint4 v[UNROLL];  // [UNROLL] vectors base + u*stride
    load_batch(x, base, stride, nvec, v);
    for (int k = 0; k < kRoundVecs && base < nvec; k += UNROLL, base += UNROLL * stride) {
      uint4 next[UNROLL];
      load_batch(x, base + UNROLL * stride, stride, k + UNROLL < kRoundVecs ? nvec : 0, next);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        if (base + u * stride < nvec) {
          count_word(counters, self, v[u].x);
          count_word(counters, self, v[u].y);
          count_word(counters, self, v[u].z);
          count_word(counters, self, v[u].w);
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) v[u] = next[u];
    }
    __syncthreads();  // every thread's counts of this round are in shared memory
    fold_counters(counters, hist);
    __syncthreads();  // zeroed before the next round counts again
  }
}
