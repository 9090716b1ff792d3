/* forgek
{
  "name": "vec_hints_golden",
  "launches": [
    {"kernel": "vec_hints_golden", "grid": ["ceil_div(N, 256)"], "block": [256],
     "args": ["xb", "xf", "yf", "yp", "yb", "yh", "yq", "ym", "N"]}
  ]
}
*/
// The truth for the hinted-access test, written without the device library: one element per thread.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void vec_hints_golden(const __nv_bfloat16* xb, const float* xf, float* yf, float* yp, float* yb,
                                            float* yh, float* yq, float* ym, int N)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float b = __bfloat162float(xb[i]);
  yf[i] = 0.5f * xf[i] + 1.0f;
  yp[i] = 3.0f * xf[i];
  yb[i] = 2.0f * b;
  yh[i] = __bfloat162float(__float2bfloat16(b * b));  // rounded to nearest, as the kernel stores it
  yq[i] = static_cast<float>(__nv_fp8_e4m3(64.0f * b));  // the constructor rounds to nearest, saturating
  if (i % 8 == 0) {
    float m = 0.0f;
    for (int j = 0; j < 8; ++j) m = fmaxf(m, fabsf(__bfloat162float(xb[i + j])));
    ym[i / 8] = m;
  }
}
