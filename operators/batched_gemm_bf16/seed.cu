/* forgek
{
  "name": "batched_gemm_bf16_seed",
  "mechanisms": ["cp_async", "mma_sync"],
  "params": {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4, "GROUP_M": 8},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM*BK + BK*BN)*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0",
                  "threads >= 64", "threads <= 512",
                  "threads * (WM*WN/32 + 72) <= 65536",
                  "(BM*BK/8) % threads == 0", "(BK*BN/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "batched_gemm_mma_sync",
     "grid": ["ceil_div(M, BM) * (N / BN)", "BATCH"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "C", "M", "N", "K"]}
  ]
}
*/
// Seed for batched_gemm_bf16: the Ampere-style mma.sync GEMM of gemm_bf16's seed (128x128 tiles,
// 4 warps of 64x64, BK 32, 4 stages), one grid row (blockIdx.y) per batch entry:
// C[b] = A[b] · B[b], bf16 in, fp32 accumulate, bf16 out. With 512^3 problems each batch entry has
// only 16 tiles, so the 64 entries together (1024 blocks) fill the GPU.
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

// Block index -> (tile_m, tile_n), walking GROUP_M tile-rows at a time down a column of tiles, so
// the blocks resident together share a few A row-panels and B column-panels in L2 instead of
// streaming all of B once per tile-row.
__device__ __forceinline__ void tile_of_block(int pid, int tiles_m, int tiles_n, int* tile_m, int* tile_n)
{
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = pid % per_group;
  *tile_m = first_m + in_group % group_rows;
  *tile_n = in_group / group_rows;
}

extern "C" __global__ void __launch_bounds__(THREADS)
batched_gemm_mma_sync(const __nv_bfloat16* __restrict__ A,  // [BATCH, M, K] row-major
                      const __nv_bfloat16* __restrict__ B,  // [BATCH, K, N] row-major
                      __nv_bfloat16* __restrict__ C,        // [BATCH, M, N] row-major
                      int M, int N, int K)
{
  // Move to batch entry blockIdx.y; from here on this is a plain [M,K]·[K,N] GEMM.
  A += (size_t)blockIdx.y * M * K;
  B += (size_t)blockIdx.y * K * N;
  C += (size_t)blockIdx.y * M * N;

  extern __shared__ __align__(128) unsigned char smem[];
  // STAGES x A tile [BM][BK], then STAGES x B tile [BK][BN]; rows swizzled by swizzle_chunk.
  __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* const sB = sA + STAGES * BM * BK;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);  // this warp's WM x WN sub-tile

  int tile_m, tile_n;
  tile_of_block(blockIdx.x, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
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
