/* forgek
{
  "name": "grouped_gemm_bf16_mma_128x256",
  "mechanisms": ["cp_async", "mma_sync"],
  "params": {"BM": 128, "BN": 256, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM*BK + BK*BN)*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0",
                  "threads >= 64", "threads <= 512",
                  "threads * (WM*WN/32 + 72) <= 65536",
                  "(BM*BK/8) % threads == 0", "(BK*BN/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "grouped_gemm_mma_sync",
     "grid": ["ceil_div(T, BM) + E", "N / BN"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "group_sizes", "C", "T", "N", "K", "E"]}
  ]
}
*/
// Expert reference for grouped_gemm_bf16 (cuBLAS, one GEMM per group, is faster but came out
// wrong on the second seed of a run in the worker; see README.md): an mma.sync tensor-core
// grouped GEMM with 128x256 block tiles (8 warps of 64x64, BK 32, a 4-stage cp.async ring,
// ~96 KiB of shared memory). For expert e, rows
// [start_e, end_e) of A and C form an ordinary [rows_e, K]·[K, N] GEMM with B[e].
//
// Grid: blockIdx.x enumerates the M-tiles of all experts one after another (expert 0's
// ceil(rows_0/BM) tiles, then expert 1's, ...); ceil(T/BM) + E slots always suffice because each
// expert wastes less than one tile. Unused slots exit. blockIdx.y is the N-tile, so blocks that run
// together share one BK x BN column panel of B[e] in L2 while they walk an expert's rows.
//
// Hierarchy: a block computes a BM x BN tile of C; its warps form a (BM/WM) x (BN/WN) grid and each
// computes WM x WN with mma.sync.m16n8k16 (fragments of 16x16 of A and 16x8 of B). K advances in
// steps of BK through a STAGES-deep ring of shared-memory buffers filled by cp.async, so the
// loads of step k+STAGES-1 are in flight while step k is multiplied.
//
// M need not be a multiple of BM: rows past M are zero-filled on load and skipped on store (the
// M=64 config runs with any BM). N and K must be multiples of BN and BK (manifest constraints).
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define MI (WM / 16)  // m16 fragments per warp tile
#define NI (WN / 8)   // n8 fragments per warp tile
#define A_CHUNKS (BK / 8)  // 16-byte chunks in one row of the A tile
#define B_CHUNKS (BN / 8)  // 16-byte chunks in one row of the B tile

// Shared-memory swizzle: chunk c of row r of a tile with `chunks` 16-byte chunks per row is stored
// at chunk c ^ f(r). ldmatrix reads one 16-byte chunk from each of 8 consecutive rows; without the
// XOR those 8 chunks sit in the same 4 banks (rows are a multiple of 64 B apart) and serialise.
// With it the 8 chunks land in 8 distinct 16-byte bank groups of a 128-byte line.
__device__ __forceinline__ int swizzle_chunk(int row, int chunk, int chunks)
{
  if (chunks >= 8) return chunk ^ (row & 7);          // one row spans >= 128 B
  return chunk ^ ((row / (8 / chunks)) % chunks);     // 64 B rows: two rows share a 128 B line
}

// M-tile slot -> (expert, first row of the expert, rows of the expert, tile within the expert), by
// the operator's rule: start[e] = min(sizes[0] + ... + sizes[e-1], T), end[e] = min(start[e] +
// sizes[e], T), and the last expert ends at T. Returns false for a slot past the last tile.
__device__ __forceinline__ bool expert_tile_of_slot(int slot, const int* __restrict__ group_sizes, int T, int E,
                                                    int* expert, int* row0, int* rows, int* tile)
{
  long long start = 0;  // 64-bit: a running sum of arbitrary i32 sizes
  for (int e = 0; e < E; ++e) {
    const long long s = min(start, (long long)T);
    const long long end = (e == E - 1) ? T : min(s + group_sizes[e], (long long)T);
    const int n_rows = (int)(end - s), n_tiles = (n_rows + BM - 1) / BM;
    if (slot < n_tiles) {
      *expert = e, *row0 = (int)s, *rows = n_rows, *tile = slot;
      return true;
    }
    slot -= n_tiles;
    start += group_sizes[e];
  }
  return false;
}

extern "C" __global__ void __launch_bounds__(THREADS)
grouped_gemm_mma_sync(const __nv_bfloat16* __restrict__ A,  // [T, K] row-major, rows sorted by expert
                      const __nv_bfloat16* __restrict__ B,  // [E, K, N] row-major
                      const int* __restrict__ group_sizes,  // [E]
                      __nv_bfloat16* __restrict__ C,        // [T, N] row-major
                      int T, int N, int K, int E)
{
  int expert, row0, M, tile_m;
  if (!expert_tile_of_slot(blockIdx.x, group_sizes, T, E, &expert, &row0, &M, &tile_m)) return;
  // From here on this is a plain [M, K]·[K, N] GEMM on the expert's rows (M = its row count).
  A += (size_t)row0 * K;
  C += (size_t)row0 * N;
  B += (size_t)expert * K * N;

  extern __shared__ __align__(128) unsigned char smem[];
  // STAGES x A tile [BM][BK], then STAGES x B tile [BK][BN]; rows swizzled by swizzle_chunk.
  __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* const sB = sA + STAGES * BM * BK;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);  // this warp's WM x WN sub-tile

  const int tile_n = blockIdx.y;
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int k_tiles = K / BK;

  // Issue the cp.async copies of k-tile kt into ring slot `slot` (one commit group per call site).
  auto load_tile = [&](int kt, int slot) {
    __nv_bfloat16* a = sA + slot * BM * BK;
    __nv_bfloat16* b = sB + slot * BK * BN;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < BM * A_CHUNKS / THREADS; ++i) {  // A[m0 .. m0+BM, k0 .. k0+BK)
      const int e = tid + i * THREADS, r = e / A_CHUNKS, c = e % A_CHUNKS;
      const bool in_m = m0 + r < M;
      const __nv_bfloat16* src = in_m ? A + (size_t)(m0 + r) * K + k0 + c * 8 : A;
      fk::cp_async_cg_16(a + r * BK + swizzle_chunk(r, c, A_CHUNKS) * 8, src, in_m ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < BK * B_CHUNKS / THREADS; ++i) {  // B[k0 .. k0+BK, n0 .. n0+BN)
      const int e = tid + i * THREADS, r = e / B_CHUNKS, c = e % B_CHUNKS;
      fk::cp_async_cg_16(b + r * BN + swizzle_chunk(r, c, B_CHUNKS) * 8, B + (size_t)(k0 + r) * N + n0 + c * 8, 16);
    }
  };

  float acc[MI][NI][4] = {};  // the warp's WM x WN accumulators, mma C-fragment layout

  // Prologue: fill STAGES-1 slots. Empty commit groups keep the group count uniform when K is short.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    fk::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    fk::cp_async_wait<STAGES - 2>();  // k-tile kt has landed (for this thread) ...
    __syncthreads();                  // ... for every thread; and slot (kt-1)%STAGES is no longer read
    {
      const int next = kt + STAGES - 1;
      if (next < k_tiles) load_tile(next, next % STAGES);
      fk::cp_async_commit();
    }

    const __nv_bfloat16* a = sA + (kt % STAGES) * BM * BK;
    const __nv_bfloat16* b = sB + (kt % STAGES) * BK * BN;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned af[MI][4], bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {  // A fragment 16x16: lanes 0-15 rows at k+0, lanes 16-31 at k+8
        const int r = warp_m * WM + mi * 16 + lane % 16, c = kk * 2 + lane / 16;
        fk::ldmatrix_x4(af[mi], a + r * BK + swizzle_chunk(r, c, A_CHUNKS) * 8);
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {  // two n8 B fragments (16 k x 16 n) per ldmatrix.x4.trans
        const int r = kk * 16 + lane % 16, c = (warp_n * WN + nj * 16) / 8 + lane / 16;
        unsigned t[4];
        fk::ldmatrix_x4_trans(t, b + r * BN + swizzle_chunk(r, c, B_CHUNKS) * 8);
        bf[2 * nj][0] = t[0];
        bf[2 * nj][1] = t[1];
        bf[2 * nj + 1][0] = t[2];
        bf[2 * nj + 1][1] = t[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) fk::mma_m16n8k16_bf16(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }
  fk::cp_async_wait<0>();  // nothing may be in flight into shared memory when the block exits

  // Epilogue: C fragment element (lane/4 [+8], 2*(lane%4) + {0,1}) -> one bf16x2 store.
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m * WM + mi * 16 + lane / 4 + 8 * h;
        const int col = n0 + warp_n * WN + ni * 8 + 2 * (lane % 4);
        if (row < M)
          *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
              __floats2bfloat162_rn(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
      }
}
