/* forgek
{
  "name": "vec_copy_golden",
  "launches": [
    {"kernel": "vec_copy_golden", "grid": ["ceil_div(N, 256)"], "block": [256],
     "args": ["xb", "xf", "yb", "yf", "yp", "N"]}
  ]
}
*/
// The truth for the vector-access test, written without the device library: one element per thread.
#include <cuda_bf16.h>

extern "C" __global__ void vec_copy_golden(const __nv_bfloat16* xb, const float* xf, float* yb, float* yf, float* yp,
                                           int N)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  yb[i] = 2.0f * __bfloat162float(xb[i]);
  yf[i] = 0.5f * xf[i] + 1.0f;
  yp[i] = __bfloat162float(xb[i ^ 1]);
}
