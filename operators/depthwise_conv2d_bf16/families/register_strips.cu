/* forgek
{
  "name": "depthwise_conv2d_3x3_register_strips",
  "mechanisms": ["vector_16B", "streaming_store", "memory_level_parallelism"],
  "controls": {"items_per_thread": ["QW"], "rows_per_block": ["PH"], "block_size": ["THREADS"],
               "cache_hint": ["LOAD_NC"], "streaming_store": ["STORE_CS"]},
  "params": {"QW": [4, 2], "PH": [8, 4, 16], "THREADS": [256, 128, 512], "LOAD_NC": [1, 0],
             "STORE_CS": [1, 0]},
  "let": {
    "strips": "ceil_div(W, QW)",
    "bands": "ceil_div(H, PH)",
    "work": "N*bands*strips*(C/8)"
  },
  "constraints": ["C % 8 == 0", "R == 3", "S == 3"],
  "launches": [
    {"kernel": "depthwise_conv2d_register_strips",
     "grid": ["ceil_div(work, THREADS)"], "block": ["THREADS"], "smem": "R*S*C*2",
     "args": ["x", "w", "y", "N", "H", "W", "C"]}
  ]
}
*/
// Depthwise 3x3 convolution, NHWC bf16, stride 1, zero 'same' padding, fp32 accumulation: the
// reference's register-strip design with its knobs as params.
//   y[n,p,q,c] = sum_{r<3, s<3} x[n, p+r-1, q+s-1, c] * w[c, r, s]   (taps outside the image = 0)
// Thread work: an output strip of QW pixels along W x 8 channels (one 16-byte vector) for PH
// consecutive rows. Thread index, fastest first: channel vector cv (C/8), strip (W/QW), row band
// (H/PH), image n, so a warp reads whole pixels (C = 256: 512 contiguous bytes).
// Per output row: the 3 x (QW+2) window's 16-byte loads all issued before the first FMA (QW sets
// the bytes in flight and the horizontal reuse: each vector feeds up to 3 taps from registers),
// QW x 8 fp32 sums in the golden's tap order, QW streaming 16-byte stores. Rows p and p+1 share
// two input rows: L1 hits (LOAD_NC 1: ld.global.nc, 0: plain ld.global, both L1-allocating).
// Filters: staged in shared memory as [9][C] (one 16-byte vector = 8 channels of one tap).
// Occupancy: 512 threads per SM targeted whatever THREADS is (so at most 128 registers).
#include <forgek/vec.cuh>

constexpr int kTaps = 9;

// x through LOAD_NC's path (both L1-allocating: rows p and p+1 share input rows); y is never
// read back: STORE_CS 1 streams it.
constexpr fk::LoadHint kLoadX = LOAD_NC ? fk::LoadHint::nc : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreY = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

// Channel pair k (0..3) of 8 packed bf16, as two floats.
__device__ __forceinline__ float2 pair(const uint4& v, int k) {
  return fk::unpack_bf16x2(k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w);
}

extern "C" __global__ void __launch_bounds__(THREADS, 512 / THREADS)
depthwise_conv2d_register_strips(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                                 const __nv_bfloat16* __restrict__ w,  // [C, 3, 3, 1]
                                 __nv_bfloat16* __restrict__ y,        // [N, H, W, C]
                                 int N, int H, int W, int C) {
  extern __shared__ uint4 w_s[];  // [9][C/8] 16-byte vectors: tap t of channels 8cv..8cv+7
  const int CV = C / 8;

  // Stage the filters: coalesced reads of w in its own order, scattered 2-byte shared writes.
  __nv_bfloat16* w_sh = reinterpret_cast<__nv_bfloat16*>(w_s);  // [9][C]
  for (int i = threadIdx.x; i < kTaps * C; i += THREADS) w_sh[(i % kTaps) * C + i / kTaps] = w[i];
  __syncthreads();

  const int strips = (W + QW - 1) / QW, bands = (H + PH - 1) / PH;
  long long t = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (t >= static_cast<long long>(N) * bands * strips * CV) return;  // no barrier follows
  const int cv = static_cast<int>(t % CV);
  t /= CV;
  const int q0 = static_cast<int>(t % strips) * QW;
  t /= strips;
  const int p_begin = static_cast<int>(t % bands) * PH;
  const long long n = t / bands;
  const int p_end = min(H, p_begin + PH);

  const uint4* xn = reinterpret_cast<const uint4*>(x) + n * H * W * CV + cv;  // pixel (h, w) at (h*W + w)*CV
  uint4* yn = reinterpret_cast<uint4*>(y) + n * H * W * CV + cv;

#pragma unroll 1
  for (int p = p_begin; p < p_end; ++p) {
    uint4 xv[3][QW + 2];  // [input rows p-1..p+1][columns q0-1..q0+QW], zeros outside the image
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const int ih = p + r - 1;
      const bool row_ok = ih >= 0 && ih < H;
#pragma unroll
      for (int j = 0; j < QW + 2; ++j) {
        const int iw = q0 - 1 + j;
        xv[r][j] = (row_ok && iw >= 0 && iw < W)
                       ? fk::load<kLoadX>(xn + (static_cast<long long>(ih) * W + iw) * CV)
                       : make_uint4(0u, 0u, 0u, 0u);
      }
    }

    float acc[QW][8];  // [QW pixels][8 channels] fp32 sums
#pragma unroll
    for (int j = 0; j < QW; ++j)
#pragma unroll
      for (int k = 0; k < 8; ++k) acc[j][k] = 0.f;

#pragma unroll
    for (int r = 0; r < 3; ++r) {
      uint4 wv[3];  // taps (r, 0..2) of this thread's 8 channels
#pragma unroll
      for (int s = 0; s < 3; ++s) wv[s] = w_s[(r * 3 + s) * CV + cv];
#pragma unroll
      for (int k = 0; k < 4; ++k) {  // channel pair 2k, 2k+1
        float2 xf[QW + 2];
#pragma unroll
        for (int j = 0; j < QW + 2; ++j) xf[j] = pair(xv[r][j], k);
#pragma unroll
        for (int s = 0; s < 3; ++s) {
          const float2 wf = pair(wv[s], k);
#pragma unroll
          for (int j = 0; j < QW; ++j) {
            acc[j][2 * k] = fmaf(xf[j + s].x, wf.x, acc[j][2 * k]);
            acc[j][2 * k + 1] = fmaf(xf[j + s].y, wf.y, acc[j][2 * k + 1]);
          }
        }
      }
    }

#pragma unroll
    for (int j = 0; j < QW; ++j) {
      if (q0 + j < W)
        fk::store<kStoreY>(yn + (static_cast<long long>(p) * W + q0 + j) * CV, fk::pack_bf16x8(acc[j]));
    }
  }
}
