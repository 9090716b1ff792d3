/* forgek
{
  "name": "wgmma_pipeline_tma_store_golden",
  "launches": [
    {"kernel": "matmul_offset_golden", "grid": ["M"], "block": ["N"], "args": ["A", "B", "C", "N", "K"]}
  ]
}
*/
// The truth for the wgmma pipeline TMA-store epilogue test, written without the device library: one thread per element of C.
#include <cuda_bf16.h>

extern "C" __global__ void matmul_offset_golden(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int N, int K)
{
  const int m = blockIdx.x, n = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[m * K + k]) * __bfloat162float(B[k * N + n]);
  C[m * N + n] = acc + (float)(m % 7) - 0.25f * (float)(n % 5);  // fp32, as every golden writes
}
