/* forgek
{
  "name": "mma_gemm_tile_test",
  "mechanisms": ["cp_async", "mma_sync"],
  "params": {"BM": 64, "BN": 64, "BK": 32, "WM": 32, "WN": 32, "STAGES": 3, "GROUP_M": 2},
  "constraints": ["N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "mma_gemm_tile_test",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": ["(BM/WM)*(BN/WN)*32"],
     "smem": "STAGES*(BM*BK + BK*BN)*2",
     "args": ["A", "B", "C", "M", "N", "K"]}
  ]
}
*/
// fk::MmaGemmTile on one block tile per block, its accumulators written as fp32 through
// for_each_pair, so that the test sees the sums before any rounding.
#include <forgek/mma_gemm_tile.cuh>

using Tile = fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES>;

extern "C" __global__ void __launch_bounds__(Tile::kThreads)
mma_gemm_tile_test(const __nv_bfloat16* __restrict__ A,  // [M, K]
                   const __nv_bfloat16* __restrict__ B,  // [K, N]
                   float* __restrict__ C,                // [M, N]
                   int M, int N, int K)
{
  extern __shared__ __align__(128) unsigned char smem[];  // Tile::kSmemBytes
  int tile_m, tile_n;
  fk::grouped_raster(blockIdx.x, GROUP_M, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  Tile tile;
  tile.multiply(A, B, M, N, K, m0, n0, smem);
  tile.for_each_pair(M, m0, n0, [&](int row, int col, float v0, float v1) {
    *reinterpret_cast<float2*>(C + (size_t)row * N + col) = make_float2(v0, v1);
  });
}
