/* forgek
{
  "name": "wgmma_rs_pv_golden",
  "launches": [
    {"kernel": "matmul_golden", "grid": ["G*64"], "block": [128], "args": ["A", "B", "C"]}
  ]
}
*/
// The truth for the register-A wgmma test, written without the device library: one thread per element of C.
#include <cuda_bf16.h>

extern "C" __global__ void matmul_golden(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C)
{
  const int m = blockIdx.x, n = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 64; ++k) acc += __bfloat162float(A[m * 64 + k]) * __bfloat162float(B[k * 128 + n]);
  C[m * 128 + n] = acc;
}
