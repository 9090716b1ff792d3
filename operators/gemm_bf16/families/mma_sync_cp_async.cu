/* forgek
{
  "name": "gemm_mma_sync_cp_async",
  "mechanisms": ["cp_async", "mma_sync"],
  "controls": {"tile": ["BM", "BN", "BK"], "mma_sync": ["WM", "WN"], "cp_async": ["STAGES"], "raster": ["GROUP_M"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [32, 64],
             "WM": [32, 64], "WN": [32, 64], "STAGES": [2, 3, 4, 5], "GROUP_M": [8, 16]},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM*BK + BK*BN)*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0",
                  "threads >= 64", "threads <= 512",
                  "threads * (WM*WN/32 + 72) <= 65536",
                  "(BM*BK/8) % threads == 0", "(BK*BN/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "gemm_mma_sync",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "C", "M", "N", "K"]}
  ]
}
*/
// Ampere-style tensor-core GEMM: C[M,N] = A[M,K] · B[K,N], bf16 in, fp32 accumulate, bf16 out.
//
// The block's BM x BN tile is fk::MmaGemmTile (<forgek/mma_gemm_tile.cuh>): (BM/WM) x (BN/WN) warps
// of WM x WN mma.sync tiles, K in BK steps through a STAGES-deep cp.async ring. Rows past M are
// zero-filled on load and skipped on store; N and K are multiples of BN and BK (constraints).
#include <cuda_bf16.h>
#include <forgek/mma_gemm_tile.cuh>

using Tile = fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES>;

extern "C" __global__ void __launch_bounds__(Tile::kThreads)
gemm_mma_sync(const __nv_bfloat16* __restrict__ A,  // [M, K] row-major
              const __nv_bfloat16* __restrict__ B,  // [K, N] row-major
              __nv_bfloat16* __restrict__ C,        // [M, N] row-major
              int M, int N, int K)
{
  extern __shared__ __align__(128) unsigned char smem[];  // Tile::kSmemBytes: the cp.async ring
  int tile_m, tile_n;
  fk::grouped_raster(blockIdx.x, GROUP_M, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;  // this block's BM x BN tile of C

  Tile tile;
  tile.multiply(A, B, M, N, K, m0, n0, smem);
  tile.store_bf16(C, M, N, m0, n0);
}
