// forgek/mma_gemm_tile.cuh: one block's BM x BN tile of a row-major bf16 GEMM on mma.sync tensor cores,
// Ampere style (namespace fk): a STAGES-deep cp.async ring of swizzled A and B tiles, ldmatrix fragments,
// fp32 accumulators in registers. The block's warps form a (BM/WM) x (BN/WN) grid, each computing WM x WN.
//   fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES> — kThreads (the block size it needs), kSmemBytes (the
//        dynamic shared memory of its ring), acc[WM/16][WN/8][4] (this thread's accumulators)
//     .multiply(A, B, M, N, K, m0, n0, smem) — acc = A[m0 .. m0+BM, 0 .. K) · B[0 .. K, n0 .. n0+BN) for
//        A [M][K] and B [K][N] row-major; rows of A at or past M read as zeros; K % BK == 0,
//        n0 + BN <= N, 16-byte aligned rows (K % 8 == 0, N % 8 == 0). Ends with nothing in flight.
//     .for_each_pair(M, m0, n0, f) — f(row, col, v0, v1) for each pair of this thread's accumulators
//        (C[row][col], C[row][col + 1]), rows at or past M skipped: the epilogue
//     .store_bf16(C, M, N, m0, n0) — the plain epilogue: C[row][col..col+1] = bf16 pairs
//   fk::mma_tile_swizzle(int row, int chunk, int chunks) — where 16-byte chunk `chunk` of row `row` of a
//        tile with `chunks` chunks per row is stored, so that ldmatrix's 8 rows hit 8 distinct bank groups
//   fk::grouped_raster(int pid, int group_m, int tiles_m, int tiles_n, int* tile_m, int* tile_n) — block
//        index -> tile, group_m tile-rows at a time down each column of tiles (L2 reuse of A and B panels)
#pragma once
#include <cuda_bf16.h>
#include <forgek/common.cuh>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>

namespace fk {

// ldmatrix reads one 16-byte chunk from each of 8 consecutive rows; without the XOR those 8 chunks sit
// in the same 4 banks (rows are a multiple of 64 B apart) and serialise. With it they land in 8
// distinct 16-byte bank groups of a 128-byte line.
FK_DEVICE int mma_tile_swizzle(int row, int chunk, int chunks)
{
  if (chunks >= 8) return chunk ^ (row & 7);       // one row spans >= 128 B
  return chunk ^ ((row / (8 / chunks)) % chunks);  // 64 B rows: two rows share a 128 B line
}

// The blocks resident together share a few A row-panels and B column-panels in L2 instead of
// streaming all of B once per tile-row.
FK_DEVICE void grouped_raster(int pid, int group_m, int tiles_m, int tiles_n, int* tile_m, int* tile_n)
{
  const int per_group = group_m * tiles_n;
  const int first_m = (pid / per_group) * group_m;
  const int group_rows = min(tiles_m - first_m, group_m);
  const int in_group = pid % per_group;
  *tile_m = first_m + in_group % group_rows;
  *tile_n = in_group / group_rows;
}

template <int BlockM, int BlockN, int BlockK, int WarpM, int WarpN, int Stages>
struct MmaGemmTile {
  static constexpr int kWarpsN = BlockN / WarpN;
  static constexpr int kThreads = (BlockM / WarpM) * kWarpsN * 32;
  static constexpr int kMI = WarpM / 16;       // m16 fragments per warp tile
  static constexpr int kNI = WarpN / 8;        // n8 fragments per warp tile
  static constexpr int kAChunks = BlockK / 8;   // 16-byte chunks in one row of the A tile
  static constexpr int kBChunks = BlockN / 8;   // 16-byte chunks in one row of the B tile
  static constexpr int kSmemBytes = Stages * (BlockM * BlockK + BlockK * BlockN) * 2;
  static_assert(BlockM % WarpM == 0 && BlockN % WarpN == 0 && WarpM % 16 == 0 && WarpN % 16 == 0, "warp tiles of m16 x n16 blocks");
  static_assert(BlockK % 16 == 0 && Stages >= 2, "k16 steps; a ring of at least two slots");
  static_assert((BlockM * kAChunks) % kThreads == 0 && (BlockK * kBChunks) % kThreads == 0, "whole chunks per thread");

  float acc[kMI][kNI][4];

  FK_DEVICE void multiply(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, int M, int N, int K,
                          int m0, int n0, unsigned char* smem)
  {
    // Stages x A tile [BlockM][BlockK], then Stages x B tile [BlockK][BlockN]; rows swizzled by mma_tile_swizzle.
    __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem);
    __nv_bfloat16* const sB = sA + Stages * BlockM * BlockK;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;  // this warp's WarpM x WarpN sub-tile
    const int k_tiles = K / BlockK;

    // The cp.async copies of k-tile kt into ring slot `slot` (one commit group per call site).
    auto load_tile = [&](int kt, int slot) {
      __nv_bfloat16* a = sA + slot * BlockM * BlockK;
      __nv_bfloat16* b = sB + slot * BlockK * BlockN;
      const int k0 = kt * BlockK;
#pragma unroll
      for (int i = 0; i < BlockM * kAChunks / kThreads; ++i) {  // A[m0 .. m0+BlockM, k0 .. k0+BlockK)
        const int e = tid + i * kThreads, r = e / kAChunks, c = e % kAChunks;
        const bool in_m = m0 + r < M;
        const __nv_bfloat16* src = in_m ? A + (size_t)(m0 + r) * K + k0 + c * 8 : A;
        cp_async_cg_16(a + r * BlockK + mma_tile_swizzle(r, c, kAChunks) * 8, src, in_m ? 16 : 0);
      }
#pragma unroll
      for (int i = 0; i < BlockK * kBChunks / kThreads; ++i) {  // B[k0 .. k0+BlockK, n0 .. n0+BlockN)
        const int e = tid + i * kThreads, r = e / kBChunks, c = e % kBChunks;
        cp_async_cg_16(b + r * BlockN + mma_tile_swizzle(r, c, kBChunks) * 8, B + (size_t)(k0 + r) * N + n0 + c * 8, 16);
      }
    };

#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.f;

    // Prologue: fill Stages-1 slots. Empty commit groups keep the group count uniform when K is short.
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s) {
      if (s < k_tiles) load_tile(s, s);
      cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<Stages - 2>();  // k-tile kt has landed (for this thread) ...
      __syncthreads();              // ... for every thread; and slot (kt-1)%Stages is no longer read
      {
        const int next = kt + Stages - 1;
        if (next < k_tiles) load_tile(next, next % Stages);
        cp_async_commit();
      }

      const __nv_bfloat16* a = sA + (kt % Stages) * BlockM * BlockK;
      const __nv_bfloat16* b = sB + (kt % Stages) * BlockK * BlockN;
#pragma unroll
      for (int kk = 0; kk < BlockK / 16; ++kk) {
        unsigned af[kMI][4], bf[kNI][2];
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) {  // A fragment 16x16: lanes 0-15 rows at k+0, lanes 16-31 at k+8
          const int r = warp_m * WarpM + mi * 16 + lane % 16, c = kk * 2 + lane / 16;
          ldmatrix_x4(af[mi], a + r * BlockK + mma_tile_swizzle(r, c, kAChunks) * 8);
        }
#pragma unroll
        for (int nj = 0; nj < kNI / 2; ++nj) {  // two n8 B fragments (16 k x 16 n) per ldmatrix.x4.trans
          const int r = kk * 16 + lane % 16, c = (warp_n * WarpN + nj * 16) / 8 + lane / 16;
          unsigned t[4];
          ldmatrix_x4_trans(t, b + r * BlockN + mma_tile_swizzle(r, c, kBChunks) * 8);
          bf[2 * nj][0] = t[0];
          bf[2 * nj][1] = t[1];
          bf[2 * nj + 1][0] = t[2];
          bf[2 * nj + 1][1] = t[3];
        }
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
          for (int ni = 0; ni < kNI; ++ni) mma_m16n8k16_bf16(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
      }
    }
    cp_async_wait<0>();  // nothing may be in flight into shared memory when the block exits
  }

  // Accumulator fragment element (lane/4 [+8], 2*(lane%4) + {0,1}) of each m16n8 block -> one call.
  template <class F>
  FK_DEVICE void for_each_pair(int M, int m0, int n0, F&& f) const
  {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni) {
      const int col = n0 + warp_n * WarpN + ni * 8 + 2 * (lane % 4);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + warp_m * WarpM + mi * 16 + lane / 4 + 8 * h;
          if (row < M) f(row, col, acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
        }
    }
  }

  FK_DEVICE void store_bf16(__nv_bfloat16* __restrict__ C, int M, int N, int m0, int n0) const
  {
    for_each_pair(M, m0, n0, [&](int row, int col, float v0, float v1) {
      *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) = __floats2bfloat162_rn(v0, v1);
    });
  }
};

}  // namespace fk
