/* forgek
{
  "name": "batched_gemm_bf16_golden",
  "params": {"TILE": 64, "TK": 16},
  "launches": [
    {"kernel": "batched_gemm_golden",
     "grid": ["ceil_div(N, TILE)", "ceil_div(M, TILE)", "BATCH"], "block": [16, 16],
     "args": ["A", "B", "C", "M", "N", "K"]}
  ]
}
*/
// The truth for batched_gemm_bf16: C[b] = A[b] · B[b] for b = blockIdx.z, every product and sum in
// fp32 on CUDA cores, C written as fp32. Per batch, a 64x64 block tile through shared memory; each
// of the 16x16 threads owns a 4x4 grid of outputs strided by 16.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
batched_gemm_golden(const __nv_bfloat16* __restrict__ A,  // [BATCH, M, K]
                    const __nv_bfloat16* __restrict__ B,  // [BATCH, K, N]
                    float* __restrict__ C,                // [BATCH, M, N], fp32
                    int M, int N, int K)
{
  __shared__ float a_tile[TILE][TK];
  __shared__ float b_tile[TK][TILE + 1];

  const size_t b = blockIdx.z;
  A += b * M * K;
  B += b * K * N;
  C += b * M * N;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  const int tid = ty * 16 + tx;

  float acc[4][4] = {};  // acc[i][j] is C[b][m0 + ty + 16*i][n0 + tx + 16*j]

  for (int k0 = 0; k0 < K; k0 += TK) {
    for (int e = tid; e < TILE * TK; e += 256) {
      const int r = e / TK, c = e % TK;
      a_tile[r][c] = (m0 + r < M && k0 + c < K) ? __bfloat162float(A[(size_t)(m0 + r) * K + k0 + c]) : 0.0f;
      const int br = e / TILE, bc = e % TILE;
      b_tile[br][bc] = (k0 + br < K && n0 + bc < N) ? __bfloat162float(B[(size_t)(k0 + br) * N + n0 + bc]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = fmaf(a_tile[ty + 16 * i][kk], b_tile[kk][tx + 16 * j], acc[i][j]);
    __syncthreads();
  }

  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
      if (gm < M && gn < N) C[(size_t)gm * N + gn] = acc[i][j];
    }
}
