/* forgek
{
  "name": "wgmma_pipeline_e4m3_golden",
  "launches": [
    {"kernel": "matmul_nt_golden", "grid": ["M"], "block": ["N"], "args": ["A", "B", "C", "N", "K"]}
  ]
}
*/
// The truth for the e4m3 pipeline test, written without the device library: one thread per element of C.
#include <cuda_fp8.h>

extern "C" __global__ void matmul_nt_golden(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, float* C, int N, int K)
{
  const int m = blockIdx.x, n = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(A[m * K + k]) * float(B[n * K + k]);
  C[m * N + n] = acc;
}
