/* forgek
{
  "name": "gemm_bias_gelu_bf16_seed",
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
    {"kernel": "gemm_bias_gelu_mma_sync",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "bias", "C", "M", "N", "K"]}
  ]
}
*/
// Seed for gemm_bias_gelu_bf16: the Ampere-style mma.sync GEMM of gemm_bf16's seed (128x128 tiles,
// 4 warps of 64x64, BK 32, 4 stages) with the bias and tanh GELU applied to the fp32 accumulators
// in the epilogue: C[M,N] = gelu(A[M,K] · B[K,N] + bias[N]), bf16 in, fp32 math, bf16 out. A plain
// starting point that leaves the Hopper mechanisms (TMA, wgmma, warp specialisation) to find.
//
// The block's BM x BN tile is fk::MmaGemmTile (<forgek/mma_gemm_tile.cuh>): (BM/WM) x (BN/WN) warps
// of WM x WN mma.sync tiles, K in BK steps through a STAGES-deep cp.async ring. Rows past M are
// zero-filled on load and skipped on store; N and K are multiples of BN and BK (constraints).
#include <cuda_bf16.h>
#include <forgek/mma_gemm_tile.cuh>

using Tile = fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES>;

// tanh GELU in fp32 (the form cuBLASLt's GELU_BIAS epilogue uses); tanhf keeps it accurate.
__device__ __forceinline__ float gelu_tanh(float v)
{
  return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void __launch_bounds__(Tile::kThreads)
gemm_bias_gelu_mma_sync(const __nv_bfloat16* __restrict__ A,     // [M, K] row-major
                        const __nv_bfloat16* __restrict__ B,     // [K, N] row-major
                        const __nv_bfloat16* __restrict__ bias,  // [N]
                        __nv_bfloat16* __restrict__ C,           // [M, N] row-major
                        int M, int N, int K)
{
  extern __shared__ __align__(128) unsigned char smem[];  // Tile::kSmemBytes: the cp.async ring
  int tile_m, tile_n;
  fk::grouped_raster(blockIdx.x, GROUP_M, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;  // this block's BM x BN tile of C

  Tile tile;
  tile.multiply(A, B, M, N, K, m0, n0, smem);
  // Epilogue: + bias, GELU, one bf16x2 store per accumulator pair.
  tile.for_each_pair(M, m0, n0, [&](int row, int col, float v0, float v1) {
    const float2 b2 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(bias + col));
    *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
        __floats2bfloat162_rn(gelu_tanh(v0 + b2.x), gelu_tanh(v1 + b2.y));
  });
}
