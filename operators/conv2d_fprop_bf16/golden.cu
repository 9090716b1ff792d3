/* forgek
{
  "name": "conv2d_fprop_bf16_golden",
  "params": {"TILE": 64, "TK": 16},
  "launches": [
    {"kernel": "conv2d_golden",
     "grid": ["ceil_div(K, TILE)", "ceil_div(N*H*W, TILE)"], "block": [16, 16],
     "args": ["x", "w", "y", "N", "H", "W", "C", "K", "R", "S"]}
  ]
}
*/
// The truth for conv2d_fprop_bf16, as an implicit GEMM on CUDA cores in fp32, y written as fp32:
//   y[m, k] = sum over t < R*S*C of a[m, t] * w[k, t], where
//   m = (n, p, q) enumerates output pixels, t = (r, s, c) enumerates filter taps (w's KRSC rows),
//   a[m, t] = x[n, p + r - R/2, q + s - S/2, c], or 0 where that falls outside the image.
// A 64-pixel x 64-filter block tile through shared memory, 16 taps at a time; each of the 16x16
// threads owns a 4x4 grid of outputs strided by 16.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
conv2d_golden(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
              const __nv_bfloat16* __restrict__ w,  // [K, R, S, C]: row k is [R*S*C] taps
              float* __restrict__ y,                // [N, H, W, K], fp32
              int N, int H, int W, int C, int K, int R, int S)
{
  __shared__ float a_tile[TILE][TK + 1];  // pixels x taps
  __shared__ float w_tile[TILE][TK + 1];  // filters x taps

  const int pixels = N * H * W, taps = R * S * C;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * TILE, k0 = blockIdx.x * TILE;
  const int tid = ty * 16 + tx;

  float acc[4][4] = {};  // acc[i][j] is y[pixel m0 + ty + 16*i][filter k0 + tx + 16*j]

  for (int t0 = 0; t0 < taps; t0 += TK) {
    for (int e = tid; e < TILE * TK; e += 256) {
      const int r_ = e / TK, c_ = e % TK, t = t0 + c_;
      // a_tile[r_][c_] = a[m0 + r_, t]
      float a = 0.0f;
      const int m = m0 + r_;
      if (m < pixels && t < taps) {
        const int n = m / (H * W), p = (m / W) % H, q = m % W;
        const int c = t % C, s = (t / C) % S, r = t / (C * S);
        const int ih = p + r - R / 2, iw = q + s - S / 2;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          a = __bfloat162float(x[(((size_t)n * H + ih) * W + iw) * C + c]);
      }
      a_tile[r_][c_] = a;
      w_tile[r_][c_] = (k0 + r_ < K && t < taps) ? __bfloat162float(w[(size_t)(k0 + r_) * taps + t]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = fmaf(a_tile[ty + 16 * i][kk], w_tile[tx + 16 * j][kk], acc[i][j]);
    __syncthreads();
  }

  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, kf = k0 + tx + 16 * j;
      if (m < pixels && kf < K) y[(size_t)m * K + kf] = acc[i][j];  // y[n,p,q,k] = y[m*K + k]
    }
}
