/* forgek
{
  "name": "grouped_gemm_bf16_golden",
  "params": {"TILE": 64, "TK": 16},
  "launches": [
    {"kernel": "grouped_gemm_golden",
     "grid": ["ceil_div(N, TILE)", "ceil_div(T, TILE)", "E"], "block": [16, 16],
     "args": ["A", "B", "group_sizes", "C", "T", "N", "K", "E"]}
  ]
}
*/
// The truth for grouped_gemm_bf16: for expert e = blockIdx.z, C[start:end] = A[start:end] · B[e],
// every product and sum in fp32 on CUDA cores, C written as fp32. The grid covers T rows per
// expert (an upper bound on any group); blocks past the end of their expert's rows exit.
// Group boundaries (the operator's rule): start[e] = min(sum of group_sizes[0..e), T);
// end[e] = min(start[e] + group_sizes[e], T), except the last expert, which ends at T.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
grouped_gemm_golden(const __nv_bfloat16* __restrict__ A,    // [T, K], rows sorted by expert
                    const __nv_bfloat16* __restrict__ B,    // [E, K, N]
                    const int* __restrict__ group_sizes,    // [E]
                    float* __restrict__ C,                  // [T, N], fp32
                    int T, int N, int K, int E)
{
  __shared__ float a_tile[TILE][TK];
  __shared__ float b_tile[TK][TILE + 1];

  const int e = blockIdx.z;
  long long start = 0;  // 64-bit: the running sum of arbitrary sizes must not overflow
  for (int j = 0; j < e; ++j) start += group_sizes[j];
  start = min(start, (long long)T);
  const long long end = (e == E - 1) ? T : min(start + group_sizes[e], (long long)T);
  const int row0 = (int)start, rows = (int)(end - start);  // this expert's rows of A and C

  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  if (m0 >= rows) return;  // uniform across the block: no barrier is skipped by only some threads
  A += (size_t)row0 * K;
  C += (size_t)row0 * N;
  B += (size_t)e * K * N;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * 16 + tx;
  float acc[4][4] = {};  // acc[i][j] is C[row0 + m0 + ty + 16*i][n0 + tx + 16*j]

  for (int k0 = 0; k0 < K; k0 += TK) {
    for (int i = tid; i < TILE * TK; i += 256) {
      const int r = i / TK, c = i % TK;
      a_tile[r][c] = (m0 + r < rows && k0 + c < K) ? __bfloat162float(A[(size_t)(m0 + r) * K + k0 + c]) : 0.0f;
      const int br = i / TILE, bc = i % TILE;
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
      if (gm < rows && gn < N) C[(size_t)gm * N + gn] = acc[i][j];
    }
}
