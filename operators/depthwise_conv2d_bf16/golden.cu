/* forgek
{
  "name": "depthwise_conv2d_bf16_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "depthwise_conv2d_golden",
     "grid": ["ceil_div(N*H*W*C, THREADS)"], "block": ["THREADS"],
     "args": ["x", "w", "y", "N", "H", "W", "C", "R", "S"]}
  ]
}
*/
// The truth for depthwise_conv2d_bf16: one thread per output element y[n, p, q, c] (c fastest, so
// neighbouring threads read neighbouring channels), the R*S taps summed in fp32, taps outside the
// image skipped (zero padding of R/2, S/2), y written as fp32.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
depthwise_conv2d_golden(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                        const __nv_bfloat16* __restrict__ w,  // [C, R, S, 1]
                        float* __restrict__ y,                // [N, H, W, C], fp32
                        int N, int H, int W, int C, int R, int S)
{
  const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= (size_t)N * H * W * C) return;
  const int c = i % C, q = (i / C) % W, p = (i / ((size_t)C * W)) % H;
  const size_t n = i / ((size_t)C * W * H);
  float acc = 0.0f;
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) {
      const int ih = p + r - R / 2, iw = q + s - S / 2;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
      acc = fmaf(__bfloat162float(x[((n * H + ih) * W + iw) * C + c]), __bfloat162float(w[((size_t)c * R + r) * S + s]), acc);
    }
  y[i] = acc;
}
