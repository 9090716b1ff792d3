/* forgek
{
  "name": "conv2d_mma_sync_ring",
  "mechanisms": ["cp_async", "mma_sync"],
  "controls": {"tile": ["BM", "BN"], "warp_tile": ["WM", "WN"], "k_tile": ["BK"], "cp_async": ["STAGES"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [32, 64], "WM": [32, 64], "WN": [32, 64],
             "STAGES": [3, 4, 5]},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM + BN)*BK*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0",
                  "threads >= 128", "threads <= 256",
                  "WM*WN < 64*64 || BM*BK/8 <= 4*threads",
                  "(BM*BK/8) % threads == 0", "(BN*BK/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "C % BK == 0", "R % 2 == 1", "S % 2 == 1"],
  "launches": [
    {"kernel": "conv2d_mma_sync_ring",
     "grid": ["ceil_div(K, BN)", "ceil_div(N*H*W, BM)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["x", "w", "y", "N", "H", "W", "C", "K", "R", "S"]}
  ]
}
*/
// Implicit-GEMM convolution on mma.sync.m16n8k16 (warp-level tensor cores) with a cp.async ring, its
// block tile, warp tile, k-tile and ring depth as params.
//   GEMM view: y[m, f] = sum_t a[m, t] * w[f, t]; m = (n, p, q) an output pixel (M = N*H*W), f a filter
//   (the GEMM's N = K), t = (r, s, c) a tap (the GEMM's K = R*S*C, w's KRSC row). C % BK == 0, so the BK
//   taps of a k-tile share (r, s) and are BK consecutive channels of one input pixel per output pixel.
//   A chunk of 16 bytes is one cp.async, zero-filled (src-size 0) in the padding or past the last pixel.
//   A thread copies the same pixels in every k-tile: their (n, p, q) are decoded once, before the loop,
//   and a k-tile only adds its tap's pixel shift (dr*W + ds)*C + c0.
//   w's rows are tap-contiguous, the mma's "col" B layout: its tile [BN][BK] is read with plain ldmatrix.
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define MI (WM / 16)                         // m16 fragments of a warp tile
#define NI (WN / 8)                          // n8 fragments of a warp tile
#define CHUNKS (BK / 8)                      // 16-byte chunks in a tile row (both tiles are [rows][BK] bf16)
#define A_COPIES (BM * CHUNKS / THREADS)     // A chunks per thread per k-tile
#define B_COPIES (BN * CHUNKS / THREADS)     // B chunks per thread per k-tile

static_assert(THREADS % CHUNKS == 0, "a thread keeps its chunk column across copies");

// Chunk of a [rows][BK] tile row under an XOR swizzle that keeps ldmatrix's 8 rows on distinct banks.
__device__ __forceinline__ int swizzle_chunk(int row, int chunk)
{
  if (CHUNKS >= 8) return fk::swizzle_xor(row, chunk);
  return chunk ^ ((row / (8 / CHUNKS)) % CHUNKS);  // rows shorter than 128 B share a line
}

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d_mma_sync_ring(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                     const __nv_bfloat16* __restrict__ w,  // [K, R, S, C] = [K][taps]
                     __nv_bfloat16* __restrict__ y,        // [N, H, W, K] = [pixels][K]
                     int N, int H, int W, int C, int K, int R, int S)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem);  // STAGES x [BM][BK]
  __nv_bfloat16* const sB = sA + STAGES * BM * BK;                     // STAGES x [BN][BK]

  const int pixels = N * H * W, taps = R * S * C;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  const int m0 = blockIdx.y * BM, f0 = blockIdx.x * BN;  // first pixel, first filter
  const int k_tiles = taps / BK, c_tiles = C / BK;
  const int chunk = tid % CHUNKS;  // this thread's 16-byte column in every row it copies

  // Row i of this thread's A copies is pixel m0 + tid/CHUNKS + i*THREADS/CHUNKS; p = -2^20: past the end.
  int pix_p[A_COPIES], pix_q[A_COPIES];
  const __nv_bfloat16* pix_src[A_COPIES];  // x at (n, p, q, chunk*8)
#pragma unroll
  for (int i = 0; i < A_COPIES; ++i) {
    const int m = m0 + tid / CHUNKS + i * (THREADS / CHUNKS);
    const int q = m % W, p = (m / W) % H, n = m / (W * H);
    pix_p[i] = m < pixels ? p : -(1 << 20);
    pix_q[i] = q;
    pix_src[i] = x + (((size_t)n * H + p) * W + q) * C + chunk * 8;
  }

  auto load_tile = [&](int kt, int slot) {
    __nv_bfloat16* a = sA + slot * BM * BK;  // [BM pixels][BK taps]
    __nv_bfloat16* b = sB + slot * BN * BK;  // [BN filters][BK taps]
    const int rs = kt / c_tiles, c0 = (kt % c_tiles) * BK;  // the tap (r, s) and first channel
    const int dr = rs / S - R / 2, ds = rs % S - S / 2;     // its input offset
    const int shift = (dr * W + ds) * C + c0;
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i) {
      const int row = tid / CHUNKS + i * (THREADS / CHUNKS);
      const int ih = pix_p[i] + dr, iw = pix_q[i] + ds;
      const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
      fk::cp_async_cg_16(a + row * BK + swizzle_chunk(row, chunk) * 8, inside ? pix_src[i] + shift : x,
                         inside ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < B_COPIES; ++i) {
      const int row = tid / CHUNKS + i * (THREADS / CHUNKS), f = f0 + row;
      fk::cp_async_cg_16(b + row * BK + swizzle_chunk(row, chunk) * 8,
                         w + (size_t)(f < K ? f : 0) * taps + (size_t)kt * BK + chunk * 8, f < K ? 16 : 0);
    }
  };

  float acc[MI][NI][4] = {};  // warp tile [WM pixels][WN filters] as m16n8 fragments

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    fk::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    fk::cp_async_wait<STAGES - 2>();
    __syncthreads();  // k-tile kt landed; every warp is done with the slot refilled below
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
        if (m < pixels && f < K)
          *reinterpret_cast<__nv_bfloat162*>(y + (size_t)m * K + f) =
              __floats2bfloat162_rn(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
      }
}
