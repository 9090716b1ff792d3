/* forgek
{
  "name": "gemm_bf16_golden",
  "mechanisms": [],
  "params": {"TILE": 64, "TK": 16},
  "launches": [
    {"kernel": "gemm_golden",
     "grid": ["ceil_div(N, TILE)", "ceil_div(M, TILE)"], "block": [16, 16],
     "args": ["A", "B", "C", "M", "N", "K"]}
  ]
}
*/
// The truth for gemm_bf16: C = A · B with every product and sum in fp32, C written as fp32.
// Plain CUDA cores, no tensor cores: a 64x64 block tile staged through shared memory, each of the
// 16x16 threads owning a 4x4 grid of outputs strided by 16 so that reads of the tiles are simple.
// Every bound is checked, so any M, N, K works.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
gemm_golden(const __nv_bfloat16* __restrict__ A,  // [M, K] row-major
            const __nv_bfloat16* __restrict__ B,  // [K, N] row-major
            float* __restrict__ C,                // [M, N] row-major, fp32
            int M, int N, int K)
{
  __shared__ float a_tile[TILE][TK];      // A[m0 .. m0+64, k0 .. k0+16)
  __shared__ float b_tile[TK][TILE + 1];  // B[k0 .. k0+16, n0 .. n0+64), padded against bank conflicts

  const int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 16
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  const int tid = ty * 16 + tx;

  float acc[4][4] = {};  // acc[i][j] is C[m0 + ty + 16*i][n0 + tx + 16*j]

  for (int k0 = 0; k0 < K; k0 += TK) {
    // 256 threads fill 64x16 elements of each tile: 4 each; out-of-range elements read as zero.
    for (int e = tid; e < TILE * TK; e += 256) {
      const int r = e / TK, c = e % TK;  // a_tile[r][c]
      const int gm = m0 + r, gk = k0 + c;
      a_tile[r][c] = (gm < M && gk < K) ? __bfloat162float(A[(size_t)gm * K + gk]) : 0.0f;
      const int br = e / TILE, bc = e % TILE;  // b_tile[br][bc]
      const int bk = k0 + br, bn = n0 + bc;
      b_tile[br][bc] = (bk < K && bn < N) ? __bfloat162float(B[(size_t)bk * N + bn]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = fmaf(a_tile[ty + 16 * i][kk], b_tile[kk][tx + 16 * j], acc[i][j]);
    __syncthreads();  // the next fill overwrites the tiles
  }

  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
      if (gm < M && gn < N) C[(size_t)gm * N + gn] = acc[i][j];
    }
}
