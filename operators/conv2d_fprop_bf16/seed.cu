/* forgek
{
  "name": "conv2d_fprop_bf16_seed",
  "mechanisms": ["cp_async", "mma_sync"],
  "params": {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM + BN)*BK*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0", "BK % 16 == 0",
                  "(BM*BK/8) % threads == 0", "(BN*BK/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "C % BK == 0", "K % BN == 0", "R % 2 == 1", "S % 2 == 1"],
  "launches": [
    {"kernel": "conv2d_implicit_gemm",
     "grid": ["K / BN", "ceil_div(N*H*W, BM)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["x", "w", "y", "N", "H", "W", "C", "K", "R", "S"]}
  ]
}
*/
// Seed for conv2d_fprop_bf16: an implicit GEMM on mma.sync.m16n8k16 tensor cores with a cp.async
// ring, in the shape of gemm_bf16's seed.
//   GEMM view: y[m, k] = sum_t a[m, t] * w[k, t] with m = (n, p, q) an output pixel (M = N*H*W),
//   k a filter (the GEMM's N = K), t = (r, s, c) a tap (the GEMM's K = R*S*C, w's KRSC row).
//   a[m, t] = x[n, p + r - R/2, q + s - S/2, c] is never materialised: the A tile of k-step kt is
//   gathered straight from x. C % BK == 0, so the BK taps of one step share (r, s) and are BK
//   consecutive channels: each 16-byte chunk is one contiguous cp.async, or zero-filled
//   (src-size 0) where the tap falls in the padding or past the last pixel.
//   w's rows are K-contiguous, the mma's "col" B layout, so its tile [BN][BK] is read with plain
//   (non-transposed) ldmatrix.
// Plain on purpose: pixel coordinates recomputed per chunk, no TMA im2col, no wgmma.
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define MI (WM / 16)
#define NI (WN / 8)
#define CHUNKS (BK / 8)  // 16-byte chunks in one tile row (both tiles are [rows][BK] bf16)

__device__ __forceinline__ int swizzle_chunk(int row, int chunk)
{
  if (CHUNKS >= 8) return chunk ^ (row & 7);
  return chunk ^ ((row / (8 / CHUNKS)) % CHUNKS);  // rows shorter than 128 B share a line
}

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d_implicit_gemm(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                     const __nv_bfloat16* __restrict__ w,  // [K, R, S, C]
                     __nv_bfloat16* __restrict__ y,        // [N, H, W, K] = [pixels, K]
                     int N, int H, int W, int C, int K, int R, int S)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem);  // STAGES x [BM][BK]
  __nv_bfloat16* const sB = sA + STAGES * BM * BK;                     // STAGES x [BN][BK]

  const int pixels = N * H * W, taps = R * S * C;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  const int m0 = blockIdx.y * BM, f0 = blockIdx.x * BN;  // first pixel, first filter
  const int k_tiles = taps / BK;

  auto load_tile = [&](int kt, int slot) {
    __nv_bfloat16* a = sA + slot * BM * BK;
    __nv_bfloat16* b = sB + slot * BN * BK;
    const int t0 = kt * BK;                               // first tap of the step
    const int rs = t0 / C, c0 = t0 % C;                   // its (r, s) and first channel
    const int dr = rs / S - R / 2, ds = rs % S - S / 2;   // input offset of this tap
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; ++i) {  // a[m0 .. m0+BM, t0 .. t0+BK)
      const int e = tid + i * THREADS, row = e / CHUNKS, c = e % CHUNKS;
      const int m = m0 + row;
      const int q = m % W, p = (m / W) % H, n = m / (W * H);
      const int ih = p + dr, iw = q + ds;
      const bool inside = m < pixels && ih >= 0 && ih < H && iw >= 0 && iw < W;
      const __nv_bfloat16* src = inside ? x + (((size_t)n * H + ih) * W + iw) * C + c0 + c * 8 : x;
      fk::cp_async_cg_16(a + row * BK + swizzle_chunk(row, c) * 8, src, inside ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < BN * CHUNKS / THREADS; ++i) {  // w[f0 .. f0+BN, t0 .. t0+BK)
      const int e = tid + i * THREADS, row = e / CHUNKS, c = e % CHUNKS;
      fk::cp_async_cg_16(b + row * BK + swizzle_chunk(row, c) * 8, w + (size_t)(f0 + row) * taps + t0 + c * 8, 16);
    }
  };

  float acc[MI][NI][4] = {};

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    fk::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    fk::cp_async_wait<STAGES - 2>();
    __syncthreads();
    {
      const int next = kt + STAGES - 1;
      if (next < k_tiles) load_tile(next, next % STAGES);
      fk::cp_async_commit();
    }

    const __nv_bfloat16* a = sA + (kt % STAGES) * BM * BK;
    const __nv_bfloat16* b = sB + (kt % STAGES) * BN * BK;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned af[MI][4], bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {  // 16 pixels x 16 taps
        const int r = warp_m * WM + mi * 16 + lane % 16, c = kk * 2 + lane / 16;
        fk::ldmatrix_x4(af[mi], a + r * BK + swizzle_chunk(r, c) * 8);
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {  // (f0-7,t0-7) (f0-7,t8-15) (f8-15,t0-7) (f8-15,t8-15)
        const int r = warp_n * WN + nj * 16 + lane % 8 + 8 * (lane / 16), c = kk * 2 + (lane / 8) % 2;
        unsigned t[4];
        fk::ldmatrix_x4(t, b + r * BK + swizzle_chunk(r, c) * 8);
        bf[2 * nj][0] = t[0];
        bf[2 * nj][1] = t[1];
        bf[2 * nj + 1][0] = t[2];
        bf[2 * nj + 1][1] = t[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) fk::mma_m16n8k16_bf16(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }
  fk::cp_async_wait<0>();

  // Epilogue: fragment element (lane/4 [+8], 2*(lane%4) + {0,1}) -> y[pixel, filter pair].
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + warp_m * WM + mi * 16 + lane / 4 + 8 * h;
        const int f = f0 + warp_n * WN + ni * 8 + 2 * (lane % 4);
        if (m < pixels)
          *reinterpret_cast<__nv_bfloat162*>(y + (size_t)m * K + f) =
              __floats2bfloat162_rn(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
      }
}
