/* forgek
{
  "name": "argmax_rows_row_per_cta",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction", "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["UNROLL"],
               "cache_hint": ["LOAD_HINT"], "packed_bf16_max": ["PACKED"]},
  "params": {"THREADS": [128, 256, 512, 1024], "UNROLL": [8, 4, 2], "LOAD_HINT": [1, 0, 2], "PACKED": [1, 0]},
  "constraints": ["N % 8 == 0"],
  "launches": [
    {"kernel": "argmax_rows_row_per_cta", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Argmax of each row of a bf16 [M, N] matrix, first occurrence on ties: one CTA per row, the row
// streamed once with 16-byte loads, a running (max, position) per thread, then a warp-shuffle and
// one-warp merge. The reference (CUB DeviceSegmentedReduce::ArgMax) is the same shape but moves
// (index, value) pairs through its generic reduction; here a thread touches only packed bf16.
//
//   row r       -> CTA r (grid = M). M = 1024 rows of 256 KB: 262 MB, ~55 us at the HBM bound
//   thread t    -> 16-byte vectors (8 bf16) t, t + THREADS, ... of its row, UNROLL of them loaded
//                  before any is used (UNROLL * 16 B per thread, UNROLL * THREADS * 16 B per CTA
//                  in flight), then the next UNROLL; one masked batch ends the row (no tail loop)
//   in thread   -> a thread's columns only grow along its walk, so a strict '>' keeps the first
//                  occurrence of its maximum
//   warp        -> fk::warp_argmax (ties to the lower column), lane 0 -> shared slot [warp]
//   CTA         -> warp 0 merges the THREADS/32 slots the same way; lane 0 writes y[r]
//
// PACKED (one idea): 1 folds a vector with three packed bf16x2 maxima (__hmax2) and keeps the
// vector index and the vector itself when its max beats the thread's; the position inside the
// winning vector is found once, at the end (the first of its 8 values equal to the max). About 8
// instructions per 8 values instead of ~30 for a compare-and-select per value: the loop stays far
// below the issue rate at 4.8 TB/s. 0 compares every value (the control).
// THREADS = 128 first: at <= 56 registers 9+ CTAs fit an SM, so all 1024 rows are resident at
// once (no second wave whose few CTAs cannot keep DRAM busy), with UNROLL = 8 keeping ~128 KB
// in flight per SM (Little's law asks ~75 KB at 36 GB/s per SM and ~2 us loaded latency).
// LOAD_HINT: 1 ld.global.nc.L1::no_allocate (x is read once), 0 ld.global.cs (evict-first),
// 2 ld.global.nc with a 256-byte L2 prefetch.
//
// A thread whose values are all -inf never takes the strict '>' branch: its first vector holds
// the first occurrence of its (-inf) maximum, which the end of the walk restores.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;

// x is read once: LOAD_HINT 1 nc no-allocate, 0 evict-first, 2 nc no-allocate with the L2 prefetch.
constexpr fk::LoadHint kLoadX = LOAD_HINT == 0   ? fk::LoadHint::cs
                                : LOAD_HINT == 1 ? fk::LoadHint::nc_na
                                                 : fk::LoadHint::nc_na_l2_256;

__device__ __forceinline__ float vec_max(const uint4& v) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
  const __nv_bfloat162 m = __hmax2(__hmax2(h[0], h[1]), __hmax2(h[2], h[3]));
  const float2 f = __bfloat1622float2(m);
  return fmaxf(f.x, f.y);
}

// A thread's running argmax over the vectors it has seen, in walk (= column) order.
struct Running {
  float best;  // the largest value seen (-inf before any beats it)
#if PACKED
  int vec;     // index of the first vector holding `best` (-1: none yet)
  uint4 held;  // that vector's 8 values
#else
  int col;     // column of the first value equal to `best` (N: none yet)
#endif
};

// Folds vector q (columns 8q .. 8q+7) into the running argmax.
__device__ __forceinline__ void fold(Running& s, const uint4& v, int q) {
#if PACKED
  const float m = vec_max(v);
  if (m > s.best) s.best = m, s.vec = q, s.held = v;
#else
  float f[8];
  fk::unpack_bf16x8(v, f);
#pragma unroll
  for (int k = 0; k < 8; ++k)
    if (f[k] > s.best) s.best = f[k], s.col = 8 * q + k;
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS)
argmax_rows_row_per_cta(const __nv_bfloat16* __restrict__ x,  // [M, N] row-major, N % 8 == 0
                        int* __restrict__ y,                  // [M] column of the first maximum
                        int M, int N) {
  __shared__ float warp_best[kWarps];  // [THREADS/32] one (value, column) per warp
  __shared__ int warp_col[kWarps];
  const int row = blockIdx.x;
  if (row >= M) return;
  const int tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp;
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);  // [nvec], 16-B aligned
  const int nvec = N / 8;

#if PACKED
  Running s{fk::neg_inf(), -1, make_uint4(0u, 0u, 0u, 0u)};
#else
  Running s{fk::neg_inf(), N};
#endif
  // Full batches: all UNROLL vectors inside the row, loaded before the first fold.
  int q = tid;
  for (; q + (UNROLL - 1) * THREADS < nvec; q += UNROLL * THREADS) {
    uint4 v[UNROLL];  // [UNROLL] vectors q, q + THREADS, ...
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = fk::load<kLoadX>(xrow + q + u * THREADS);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) fold(s, v[u], q + u * THREADS);
  }
  // At most one partial batch is left: predicated loads and folds.
  if (q < nvec) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      v[u] = q + u * THREADS < nvec ? fk::load<kLoadX>(xrow + q + u * THREADS) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (q + u * THREADS < nvec) fold(s, v[u], q + u * THREADS);
  }

  // This thread's (value, column): the first column holding its maximum.
  float v = s.best;
#if PACKED
  int j = N;  // no vector: loses every tie against a real column
  if (s.vec >= 0) {
    float f[8];
    fk::unpack_bf16x8(s.held, f);
    int k = 7;
#pragma unroll
    for (int i = 7; i >= 0; --i)
      if (f[i] == v) k = i;  // the lowest i equal to the max
    j = 8 * s.vec + k;
  } else if (tid < nvec) {
    j = 8 * tid;  // every value was -inf: the first one of the walk
  }
#else
  int j = s.col;
  if (j == N && tid < nvec) j = 8 * tid;  // every value was -inf: the first one of the walk
#endif

  fk::warp_argmax(v, j);
  if (lane == 0) warp_best[warp] = v, warp_col[warp] = j;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_best[lane] : fk::neg_inf();
    j = lane < kWarps ? warp_col[lane] : N;
    fk::warp_argmax(v, j);
    if (lane == 0) y[row] = j;
  }
}
