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
// The block's BM x BN tile is fk::MmaGemmTile (<forgek/mma_gemm_tile.cuh>): (BM/WM) x (BN/WN) warps
// of WM x WN mma.sync tiles, K in BK steps through a STAGES-deep cp.async ring. Rows past M are
// zero-filled on load and skipped on store; N and K are multiples of BN and BK (constraints).
#include <cuda_bf16.h>
#include <forgek/mma_gemm_tile.cuh>

using Tile = fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES>;

extern "C" __global__ void __launch_bounds__(Tile::kThreads)
batched_gemm_mma_sync(const __nv_bfloat16* __restrict__ A,  // [BATCH, M, K] row-major
                      const __nv_bfloat16* __restrict__ B,  // [BATCH, K, N] row-major
                      __nv_bfloat16* __restrict__ C,        // [BATCH, M, N] row-major
                      int M, int N, int K)
{
  // Move to batch entry blockIdx.y; from here on this is a plain [M,K]·[K,N] GEMM.
  A += (size_t)blockIdx.y * M * K;
  B += (size_t)blockIdx.y * K * N;
  C += (size_t)blockIdx.y * M * N;

  extern __shared__ __align__(128) unsigned char smem[];  // Tile::kSmemBytes: the cp.async ring
  int tile_m, tile_n;
  fk::grouped_raster(blockIdx.x, GROUP_M, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;  // this block's BM x BN tile of C

  Tile tile;
  tile.multiply(A, B, M, N, K, m0, n0, smem);
  tile.store_bf16(C, M, N, m0, n0);
}
