/* forgek
{
  "name": "depthwise_conv2d_3x3_smem_halo_tile",
  "mechanisms": ["cp_async", "vector_16B", "streaming_store", "smem_row_cache", "memory_level_parallelism"],
  "controls": {"channel_slice": ["CC"], "tile": ["TH", "TW"], "items_per_thread": ["QW"],
               "streaming_store": ["STORE_CS"]},
  "params": {"CC": [64, 128, 256], "TW": [32, 16], "TH": [8, 16, 4], "QW": [2, 4], "STORE_CS": [1, 0]},
  "let": {
    "threads": "(CC/8)*(TW/QW)",
    "smem_bytes": "(TH+2)*(TW+2)*CC*2"
  },
  "constraints": ["C % CC == 0", "R == 3", "S == 3", "TW % QW == 0", "threads % 32 == 0",
                  "threads >= 64", "threads <= 512", "smem_bytes <= 232448"],
  "launches": [
    {"kernel": "depthwise_conv2d_smem_halo_tile",
     "grid": ["ceil_div(W, TW)*(C/CC)", "ceil_div(H, TH)", "N"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["x", "w", "y", "N", "H", "W", "C"]}
  ]
}
*/
// Depthwise 3x3 convolution, NHWC bf16, stride 1, zero 'same' padding, fp32 accumulation, from a
// shared-memory halo tile filled by cp.async (one DRAM/L2 read per input vector, no L1 re-reads).
//   y[n,p,q,c] = sum_{r<3, s<3} x[n, p+r-1, q+s-1, c] * w[c, r, s]   (taps outside the image = 0)
// CTA work: image n = blockIdx.z, output rows [p0, p0+TH), columns [q0, q0+TW), channel slice
// [c0, c0+CC); blockIdx.x = column tile * (C/CC) + slice.
//   x_s [TH+2][TW+2][CC/8] 16-byte vectors: input rows p0-1 .. p0+TH, columns q0-1 .. q0+TW of
//       the slice; every thread issues its share of cp.async copies at once (the whole tile in
//       flight), zero-filled outside the image, so the compute needs no bounds checks.
// Thread: channel vector cv = tid % (CC/8) (lanes of a quarter-warp read 128 contiguous bytes:
// conflict-free), strip = tid / (CC/8): output columns q0 + QW*strip .. +QW, for all TH rows.
// Its 8 channels' 3x3 filters stay in registers for the whole tile (w is [C][9], so they are 144
// contiguous bytes = 9 16-byte loads, issued before the cp.async wait), unpacked per use.
// Per output row: for each filter row r, QW+2 shared vectors, QW x 8 fp32 sums in the golden's
// tap order (r outer, s inner, fmaf); QW 16-byte stores (streaming with STORE_CS).
// Columns and rows past the image (tiles overhanging W or H) are computed from zeros, not stored.
#include <forgek/cp_async.cuh>
#include <forgek/vec.cuh>

constexpr int kVecs = CC / 8;                  // 16-byte channel vectors in the slice
constexpr int kThreads = kVecs * (TW / QW);
constexpr int kCols = TW + 2, kRows = TH + 2;  // halo tile extent in pixels
// y is never read back: STORE_CS 1 streams it.
constexpr fk::StoreHint kStoreY = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

// Filter tap t (0..8) of channel ch (0..7) from the thread's 72 packed bf16 w[c0+ch][t].
__device__ __forceinline__ float tap(const unsigned (&wr)[36], int ch, int t) {
  const int e = ch * 9 + t;
  const unsigned u = wr[e / 2];
  return __uint_as_float((e & 1) ? (u & 0xffff0000u) : (u << 16));
}

extern "C" __global__ void __launch_bounds__(kThreads)
depthwise_conv2d_smem_halo_tile(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                                const __nv_bfloat16* __restrict__ w,  // [C, 3, 3, 1]
                                __nv_bfloat16* __restrict__ y,        // [N, H, W, C]
                                int N, int H, int W, int C) {
  extern __shared__ uint4 x_s[];  // [TH+2][TW+2][CC/8]
  const int slices = C / CC;
  const int c0 = (blockIdx.x % slices) * CC;
  const int q0 = (blockIdx.x / slices) * TW;
  const int p0 = blockIdx.y * TH;
  const long long n = blockIdx.z;

  // Halo tile: vector i = (row hr, column wc, channel vector v), v fastest (coalesced reads).
  const __nv_bfloat16* xn = x + n * H * W * C + c0;
#pragma unroll 4
  for (int i = threadIdx.x; i < kRows * kCols * kVecs; i += kThreads) {
    const int v = i % kVecs, px = i / kVecs;
    const int ih = p0 - 1 + px / kCols, iw = q0 - 1 + px % kCols;
    const bool ok = ih >= 0 && ih < H && iw >= 0 && iw < W;
    const __nv_bfloat16* src = ok ? xn + (static_cast<long long>(ih) * W + iw) * C + 8 * v : x;  // unread if !ok
    fk::cp_async_cg_16(&x_s[i], src, ok ? 16 : 0);
  }
  fk::cp_async_commit();

  const int cv = threadIdx.x % kVecs, strip = threadIdx.x / kVecs;
  const int c = c0 + 8 * cv;  // this thread's first channel
  unsigned wr[36];            // [8 channels][9 taps] packed bf16: w[c .. c+7][0 .. 8]
  const uint4* wc = reinterpret_cast<const uint4*>(w + static_cast<long long>(c) * 9);  // 144 B, 16-aligned
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    const uint4 t4 = __ldg(wc + i);
    wr[4 * i] = t4.x; wr[4 * i + 1] = t4.y; wr[4 * i + 2] = t4.z; wr[4 * i + 3] = t4.w;
  }

  fk::cp_async_wait_all();
  __syncthreads();

  const int qs = QW * strip;  // first output column of the strip, tile-local
  uint4* yn = reinterpret_cast<uint4*>(y + n * H * W * C + c);
#pragma unroll 1
  for (int pi = 0; pi < TH; ++pi) {
    const int p = p0 + pi;
    if (p >= H) break;  // no barrier follows
    float acc[QW][8];   // [QW pixels][8 channels]
#pragma unroll
    for (int j = 0; j < QW; ++j)
#pragma unroll
      for (int k = 0; k < 8; ++k) acc[j][k] = 0.f;

#pragma unroll
    for (int r = 0; r < 3; ++r) {
      uint4 xv[QW + 2];  // input row p+r-1, tile columns qs .. qs+QW+1 (= q0+qs-1 .. q0+qs+QW)
#pragma unroll
      for (int j = 0; j < QW + 2; ++j) xv[j] = x_s[((pi + r) * kCols + qs + j) * kVecs + cv];
#pragma unroll
      for (int k = 0; k < 4; ++k) {  // channel pair 2k, 2k+1
        float2 xf[QW + 2];
#pragma unroll
        for (int j = 0; j < QW + 2; ++j)
          xf[j] = fk::unpack_bf16x2(k == 0 ? xv[j].x : k == 1 ? xv[j].y : k == 2 ? xv[j].z : xv[j].w);
#pragma unroll
        for (int s = 0; s < 3; ++s) {
          const float w0 = tap(wr, 2 * k, 3 * r + s), w1 = tap(wr, 2 * k + 1, 3 * r + s);
#pragma unroll
          for (int j = 0; j < QW; ++j) {
            acc[j][2 * k] = fmaf(xf[j + s].x, w0, acc[j][2 * k]);
            acc[j][2 * k + 1] = fmaf(xf[j + s].y, w1, acc[j][2 * k + 1]);
          }
        }
      }
    }

#pragma unroll
    for (int j = 0; j < QW; ++j) {
      const int q = q0 + qs + j;
      if (q < W) {
        uint4* dst = yn + (static_cast<long long>(p) * W + q) * (C / 8);
        fk::store<kStoreY>(dst, fk::pack_bf16x8(acc[j]));
      }
    }
  }
}
