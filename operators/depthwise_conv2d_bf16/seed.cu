/* forgek
{
  "name": "depthwise_conv2d_bf16_seed",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "constraints": ["C % 2 == 0"],
  "launches": [
    {"kernel": "depthwise_conv2d_pairs",
     "grid": ["ceil_div(N*H*W*(C/2), THREADS)"], "block": ["THREADS"],
     "args": ["x", "w", "y", "N", "H", "W", "C", "R", "S"]}
  ]
}
*/
// Seed for depthwise_conv2d_bf16: one thread per pair of channels of one output pixel (bf16x2
// loads and stores, channels fastest so a warp reads 128 contiguous bytes per tap), the R*S taps
// read straight from global memory and summed in fp32, borders skipped (zero padding R/2, S/2).
// Plain on purpose: every x element is fetched by R*S threads (the caches absorb most of it), no
// shared-memory halo tile, no register reuse along a row, filters re-read per output.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
depthwise_conv2d_pairs(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                       const __nv_bfloat16* __restrict__ w,  // [C, R, S, 1]
                       __nv_bfloat16* __restrict__ y,        // [N, H, W, C]
                       int N, int H, int W, int C, int R, int S)
{
  const int C2 = C / 2;
  const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;  // (n, p, q, channel pair)
  if (i >= (size_t)N * H * W * C2) return;
  const int c = 2 * (int)(i % C2), q = (i / C2) % W, p = (i / ((size_t)C2 * W)) % H;
  const size_t n = i / ((size_t)C2 * W * H);

  float acc0 = 0.0f, acc1 = 0.0f;
  for (int r = 0; r < R; ++r) {
    const int ih = p + r - R / 2;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < S; ++s) {
      const int iw = q + s - S / 2;
      if (iw < 0 || iw >= W) continue;
      const float2 xv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(x + ((n * H + ih) * W + iw) * C + c));
      acc0 = fmaf(xv.x, __bfloat162float(w[((size_t)c * R + r) * S + s]), acc0);
      acc1 = fmaf(xv.y, __bfloat162float(w[((size_t)(c + 1) * R + r) * S + s]), acc1);
    }
  }
  *reinterpret_cast<__nv_bfloat162*>(y + ((n * H + p) * W + q) * C + c) = __floats2bfloat162_rn(acc0, acc1);
}
