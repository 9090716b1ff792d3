/* forgek
{
  "name": "gemv_bf16_column_tiles_split_k",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "split_k"],
  "controls": {"split_k": ["KSPLIT"], "memory_level_parallelism": ["UNROLL"], "block_size": ["WARPS"],
               "cache_hint": ["LOAD_HINT"]},
  "params": {"KSPLIT": [8, 4, 16, 2, 1], "UNROLL": [8, 4, 16], "WARPS": [8, 4, 16], "LOAD_HINT": [1, 0, 2]},
  "let": {"tiles": "ceil_div(N, 256)"},
  "constraints": ["K % KSPLIT == 0", "UNROLL <= 32"],
  "workspaces": [
    {"name": "part",  "bytes": "(KSPLIT > 1) * 4*KSPLIT*N", "zero": false},
    {"name": "count", "bytes": "(KSPLIT > 1) * 4*tiles",    "zero": true}
  ],
  "launches": [
    {"kernel": "gemv_column_tiles_split_k", "grid": ["tiles", "KSPLIT"], "block": ["32*WARPS"],
     "args": ["x", "W", "y", "part", "count", "K", "N"]}
  ]
}
*/
// y[1,N] = x[1,K] · W[K,N] at DRAM bandwidth: W (2*K*N bytes) is streamed once, in 16-byte loads,
// with many loads in flight on every SM, and K is split across blocks so that the grid fills the
// GPU even when N holds few column tiles (N = 28672: 112 tiles of 256 columns for 132 SMs).
//
//   block (tile, split) -> columns [256*tile, 256*tile + 256) and rows [split*K/KSPLIT, (split+1)*K/KSPLIT)
//   lane l              -> columns 256*tile + 8l .. 8l+7: one 16-byte load per row (a warp reads
//                          512 contiguous bytes of a row of W)
//   warp w              -> in each step of WARPS*UNROLL rows of the block's slice, the UNROLL
//                          consecutive rows w*UNROLL .. w*UNROLL+UNROLL-1; their UNROLL loads are all
//                          issued before any FMA (UNROLL*16 bytes in flight per thread), and lane u
//                          loads x[row u] once, handed to the warp by a shuffle (no shared memory
//                          for x, no barrier before the stream starts)
//   block end           -> the WARPS partial sums of each column meet in shared memory (fp32)
//   split end           -> KSPLIT == 1: y written directly. Otherwise each block writes its fp32
//                          partial row part[split][256 columns] and counts itself on count[tile]; the
//                          last block of the tile sums the KSPLIT partials in split order (the same
//                          order whatever the arrival order: deterministic) and rounds y to bf16 once.
// Columns past N (the last tile when N % 256 != 0; N % 64 == 0 keeps 8-column groups whole) load
// nothing and write nothing. LOAD_HINT picks the load of W: 1 ld.global.nc.L1::no_allocate,
// 0 ld.global.cs (evict-first), 2 ld.global.nc.L1::no_allocate.L2::256B (L2 prefetches the row's
// 256-byte neighbourhood).
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kTileCols = 8 * kWarp;  // 256 columns per block: 8 bf16 per lane
constexpr int kThreads = kWarp * WARPS;
constexpr int kColsPerThread = (kTileCols + kThreads - 1) / kThreads;  // of the cross-warp sum

// W is read once: LOAD_HINT 1 nc no-allocate, 0 evict-first, 2 nc no-allocate with the L2 prefetch.
constexpr fk::LoadHint kLoadW = LOAD_HINT == 0   ? fk::LoadHint::cs
                                : LOAD_HINT == 1 ? fk::LoadHint::nc_na
                                                 : fk::LoadHint::nc_na_l2_256;

// acc[j] += x[k] * W[k, n0 + j] for the UNROLL rows k = k0 .. k0 + UNROLL - 1 (Guard: only those
// below k_end). All 32 lanes call it (the shuffles); lanes with cols_ok false load no W.
template <bool Guard>
__device__ __forceinline__ void fma_rows(const __nv_bfloat16* __restrict__ x,
                                         const __nv_bfloat16* __restrict__ wcol,  // W + n0
                                         int N, int k0, int k_end, bool cols_ok, int lane, float (&acc)[8]) {
  uint4 w[UNROLL];  // [UNROLL rows][8 bf16]: all loads issued before the first FMA
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    w[u] = (cols_ok && (!Guard || k0 + u < k_end))
               ? fk::load<kLoadW>(reinterpret_cast<const uint4*>(wcol + static_cast<size_t>(k0 + u) * N))
               : make_uint4(0u, 0u, 0u, 0u);
  const bool x_ok = lane < UNROLL && (!Guard || k0 + lane < k_end);
  const float xl = x_ok ? __bfloat162float(x[k0 + lane]) : 0.f;  // lane u holds x[k0 + u]
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const float xk = __shfl_sync(0xffffffffu, xl, u);
    float f[8];
    fk::unpack_bf16x8(w[u], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = fmaf(xk, f[j], acc[j]);
  }
}

extern "C" __global__ void __launch_bounds__(kThreads)
gemv_column_tiles_split_k(const __nv_bfloat16* __restrict__ x,  // [1, K]
                          const __nv_bfloat16* __restrict__ W,  // [K, N] row-major
                          __nv_bfloat16* __restrict__ y,        // [1, N]
                          float* __restrict__ part,             // [KSPLIT, N] fp32 partials (KSPLIT > 1)
                          unsigned* __restrict__ count,         // [tiles] blocks done per tile, zeroed
                          int K, int N) {
  __shared__ __align__(16) float partial[WARPS][kTileCols];  // [warp][column of the tile]
  __shared__ bool last_block;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int tile = blockIdx.x, split = blockIdx.y;
  const int n0 = tile * kTileCols + 8 * lane;  // this lane's 8 columns
  const bool cols_ok = n0 < N;
  const int k_len = K / KSPLIT;  // K % KSPLIT == 0
  const int k_begin = split * k_len, k_end = k_begin + k_len;

  // Stream this block's rows: full steps unguarded, then at most one partial step per warp.
  float acc[8] = {};
  const __nv_bfloat16* wcol = W + n0;
  int k0 = k_begin + warp * UNROLL;
  for (; k0 + UNROLL <= k_end; k0 += WARPS * UNROLL) fma_rows<false>(x, wcol, N, k0, k_end, cols_ok, lane, acc);
  if (k0 < k_end) fma_rows<true>(x, wcol, N, k0, k_end, cols_ok, lane, acc);

  // The WARPS partial sums of each column meet in shared memory; thread t then owns the tile's
  // columns c = t + i*kThreads (kColsPerThread of them, fewer at the end when kThreads > 256).
  float4* mine = reinterpret_cast<float4*>(&partial[warp][8 * lane]);
  mine[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  mine[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
  __syncthreads();
  const int n_tile = tile * kTileCols;
  float col_sum[kColsPerThread];
#pragma unroll
  for (int i = 0; i < kColsPerThread; ++i) {
    const int c = threadIdx.x + i * kThreads;
    col_sum[i] = 0.f;
    if (c < kTileCols) {
#pragma unroll
      for (int v = 0; v < WARPS; ++v) col_sum[i] += partial[v][c];
    }
  }

  if (KSPLIT == 1) {  // the block holds the whole sum: round once and write y
#pragma unroll
    for (int i = 0; i < kColsPerThread; ++i) {
      const int c = threadIdx.x + i * kThreads;
      if (c < kTileCols && n_tile + c < N) y[n_tile + c] = __float2bfloat16(col_sum[i]);
    }
    return;
  }

  // Split K: publish this block's partial, then the tile's last block to arrive combines them.
#pragma unroll
  for (int i = 0; i < kColsPerThread; ++i) {
    const int c = threadIdx.x + i * kThreads;
    if (c < kTileCols && n_tile + c < N) __stcg(&part[static_cast<size_t>(split) * N + n_tile + c], col_sum[i]);
  }
  __threadfence();  // the partial is visible GPU-wide before this block is counted
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(&count[tile], 1u) == KSPLIT - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();  // the other blocks' partials, counted before ours, are read after the count
  for (int c = threadIdx.x; c < kTileCols; c += kThreads) {
    if (n_tile + c >= N) continue;
    float s = 0.f;
    for (int sp = 0; sp < KSPLIT; ++sp) s += __ldcg(&part[static_cast<size_t>(sp) * N + n_tile + c]);
    y[n_tile + c] = __float2bfloat16(s);
  }
}
