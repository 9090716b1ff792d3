/* forgek
{
  "name": "gemm_fp8_e4m3_golden",
  "params": {"TILE": 64, "TK": 16},
  "launches": [
    {"kernel": "gemm_fp8_golden",
     "grid": ["ceil_div(N, TILE)", "ceil_div(M, TILE)"], "block": [16, 16],
     "args": ["A", "B", "scale_a", "scale_b", "C", "M", "N", "K"]}
  ]
}
*/
// The truth for gemm_fp8_e4m3: C = scale_a * scale_b * (A · B^T), every e4m3 value widened to fp32
// (exactly), every product and sum in fp32 on CUDA cores, the scales applied once to the sum, C
// written as fp32. A 64x64 block tile through shared memory; each of the 16x16 threads owns a 4x4
// grid of outputs strided by 16. Every bound is checked, so any M, N, K works.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void __launch_bounds__(256)
gemm_fp8_golden(const __nv_fp8_e4m3* __restrict__ A,  // [M, K] row-major
                const __nv_fp8_e4m3* __restrict__ B,  // [N, K] row-major: row n is output column n
                const float* __restrict__ scale_a,    // [1]
                const float* __restrict__ scale_b,    // [1]
                float* __restrict__ C,                // [M, N] row-major, fp32
                int M, int N, int K)
{
  __shared__ float a_tile[TILE][TK + 1];  // A[m0 .. m0+64, k0 .. k0+16)
  __shared__ float b_tile[TILE][TK + 1];  // B[n0 .. n0+64, k0 .. k0+16); +1 against bank conflicts

  const int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 16
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  const int tid = ty * 16 + tx;

  float acc[4][4] = {};  // acc[i][j] is C[m0 + ty + 16*i][n0 + tx + 16*j]

  for (int k0 = 0; k0 < K; k0 += TK) {
    for (int e = tid; e < TILE * TK; e += 256) {  // both tiles are 64 rows x 16 k
      const int r = e / TK, c = e % TK, gk = k0 + c;
      a_tile[r][c] = (m0 + r < M && gk < K) ? float(A[(size_t)(m0 + r) * K + gk]) : 0.0f;
      b_tile[r][c] = (n0 + r < N && gk < K) ? float(B[(size_t)(n0 + r) * K + gk]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = fmaf(a_tile[ty + 16 * i][kk], b_tile[tx + 16 * j][kk], acc[i][j]);
    __syncthreads();  // the next fill overwrites the tiles
  }

  const float scale = scale_a[0] * scale_b[0];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
      if (gm < M && gn < N) C[(size_t)gm * N + gn] = scale * acc[i][j];
    }
}
