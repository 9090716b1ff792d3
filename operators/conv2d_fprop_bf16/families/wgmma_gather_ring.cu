/* forgek
{
  "name": "conv2d_wgmma_gather_ring",
  "archs": ["sm90"],
  "mechanisms": ["cp_async", "wgmma"],
  "controls": {"tile": ["BM", "BN"], "cp_async": ["STAGES"]},
  "params": {"BM": [128, 256], "BN": [128, 256], "BK": 64, "STAGES": [3, 4, 5, 6]},
  "let": {"threads": "(BM/64)*128",
          "smem_bytes": "STAGES*(BM + BN)*BK*2 + 1024"},
  "constraints": ["BM * BN <= 128*256", "smem_bytes <= 232448",
                  "C % BK == 0", "R % 2 == 1", "S % 2 == 1"],
  "launches": [
    {"kernel": "conv2d_wgmma_gather_ring",
     "grid": ["ceil_div(K, BN)", "ceil_div(N*H*W, BM)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["x", "w", "y", "N", "H", "W", "C", "K", "R", "S"]}
  ]
}
*/
// Implicit-GEMM convolution on Hopper wgmma, operands gathered by cp.async into the 128B-swizzled
// layout wgmma reads, in a STAGES-deep ring that every thread fills and every warpgroup consumes.
//   GEMM view: y[m, f] = sum_t a[m, t] * w[f, t]; m = (n, p, q) an output pixel (M = N*H*W), f a filter
//   (the GEMM's N = K), t = (r, s, c) a tap (the GEMM's K = R*S*C, w's KRSC row). Tap-outer order: a
//   k-tile is BK = 64 consecutive channels of one (r, s), so one 128-byte row per pixel / filter.
//   a[m, t] = x[n, p + r - R/2, q + s - S/2, c] is gathered, never materialised: each 16-byte chunk is
//   one cp.async, zero-filled (src-size 0) where the tap falls in the padding or past the last pixel.
//   w [K][R*S*C] is a plain K-major matrix: its tile is the wgmma's K-major B operand as it stands.
// Warpgroup g owns output rows [64g, 64g + 64) of the block tile and all BN filters: one
// m64nBNk16 wgmma per 16 taps. The ring refills the slot read two k-tiles ago, so the wgmmas of the
// previous k-tile stay in flight while the next gathers are issued (wgmma_wait<1>).
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

#define THREADS ((BM / 64) * 128)
#define ROW_BYTES (BK * 2)                    // 128: one swizzle row per pixel / filter per k-tile
#define CHUNKS (ROW_BYTES / 16)               // 8 chunks of 16 B in a row
#define A_COPIES (BM * CHUNKS / THREADS)      // 4 A chunks per thread per k-tile
#define B_COPIES (BN * CHUNKS / THREADS)      // B chunks per thread per k-tile
#define A_TILE_BYTES (BM * ROW_BYTES)         // [BM pixels][64 channels], 128B swizzle
#define B_TILE_BYTES (BN * ROW_BYTES)         // [BN filters][64 channels], 128B swizzle
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)

static_assert(BK == 64, "a k-tile is one 128-byte swizzle row of bf16");
static_assert(STAGES >= 3, "the ring refills the slot read two k-tiles ago");
static_assert(THREADS % CHUNKS == 0, "a thread keeps its chunk column across copies");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
conv2d_wgmma_gather_ring(const __nv_bfloat16* __restrict__ x,  // [N, H, W, C]
                         const __nv_bfloat16* __restrict__ w,  // [K, R, S, C] = [K][taps]
                         __nv_bfloat16* __restrict__ y,        // [N, H, W, K] = [pixels][K]
                         int N, int H, int W, int C, int K, int R, int S)
{
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 B and wgmma assumes its 8-row atoms start 1024-aligned.
  unsigned char* const smem =
      reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  // Slot s: A tile at smem + s*STAGE_BYTES, B tile right after it.

  const int pixels = N * H * W, taps = R * S * C;
  const int tid = threadIdx.x, wg = tid / 128;
  const int m0 = blockIdx.y * BM, f0 = blockIdx.x * BN;  // first pixel, first filter
  const int k_tiles = taps / BK, c_tiles = C / BK;
  const int chunk = tid % CHUNKS;  // this thread's 16-byte column in every row it copies

  // The pixels this thread gathers for are the same in every k-tile: decode them once.
  // Row i of the copies is pixel m0 + tid/CHUNKS + i*THREADS/CHUNKS; p = -2^20 marks a row past the end.
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
  // Filter rows likewise; rows at or past K read as zero and their columns are never stored.
  const __nv_bfloat16* filt_src[B_COPIES];
  bool filt_in[B_COPIES];
#pragma unroll
  for (int i = 0; i < B_COPIES; ++i) {
    const int f = f0 + tid / CHUNKS + i * (THREADS / CHUNKS);
    filt_in[i] = f < K;
    filt_src[i] = w + (size_t)(f < K ? f : 0) * taps + chunk * 8;
  }

  // Issue the cp.asyncs of k-tile kt into slot `slot` (no commit).
  auto gather = [&](int kt, int slot) {
    unsigned char* a = smem + slot * STAGE_BYTES;  // [BM][128 B]
    unsigned char* b = a + A_TILE_BYTES;           // [BN][128 B]
    const int rs = kt / c_tiles, c0 = (kt % c_tiles) * BK;  // the tap (r, s) and first channel
    const int dr = rs / S - R / 2, ds = rs % S - S / 2;     // its input offset
    const int shift = (dr * W + ds) * C + c0;              // the same pixel shift for every row
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i) {
      const int row = tid / CHUNKS + i * (THREADS / CHUNKS);
      const int ih = pix_p[i] + dr, iw = pix_q[i] + ds;
      const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
      fk::cp_async_cg_16(a + row * ROW_BYTES + fk::swizzle_xor(row, chunk) * 16,
                         inside ? pix_src[i] + shift : x, inside ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < B_COPIES; ++i) {
      const int row = tid / CHUNKS + i * (THREADS / CHUNKS);
      fk::cp_async_cg_16(b + row * ROW_BYTES + fk::swizzle_xor(row, chunk) * 16,
                         filt_src[i] + (size_t)kt * BK, filt_in[i] ? 16 : 0);
    }
  };

  float acc[BN / 2];  // this warpgroup's 64 pixels x BN filters (fk::wgmma_acc_row / _col)
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

  // Prologue: k-tiles 0 .. STAGES-3 in flight, one cp.async group each.
#pragma unroll
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < k_tiles) gather(s, s);
    fk::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Groups committed so far: STAGES-2 + kt; k-tile kt is group kt, so STAGES-3 may stay pending.
    fk::cp_async_wait<STAGES - 3>();
    fk::fence_proxy_async_smem();  // this thread's cp.async writes, seen by the wgmma (async proxy) reads
    // After the barrier: k-tile kt is in shared memory, and every warpgroup has retired the wgmmas of
    // k-tile kt-2 (wgmma_wait<1> below), so its slot may be refilled.
    __syncthreads();
    {
      const int next = kt + STAGES - 2;
      if (next < k_tiles) gather(next, next % STAGES);
      fk::cp_async_commit();
    }

    const unsigned char* a = smem + (kt % STAGES) * STAGE_BYTES + wg * 64 * ROW_BYTES;  // [64][128 B]
    const unsigned char* b = smem + (kt % STAGES) * STAGE_BYTES + A_TILE_BYTES;         // [BN][128 B]
    fk::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks)  // four k16 steps, 32 B apart along the swizzled row
      fk::wgmma_m64k16_bf16<BN, 0>(acc, fk::wgmma_desc_kmajor_128b(a + ks * 32),
                                   fk::wgmma_desc_kmajor_128b(b + ks * 32));
    fk::wgmma_commit();
    fk::wgmma_wait<1>();
  }
  fk::wgmma_wait<0>();
  fk::wgmma_fence_acc<BN / 2>(acc);
  fk::cp_async_wait_all();

  // Epilogue: floats 2j, 2j+1 are adjacent filters of one pixel: one bf16x2 store each.
  const int t = tid % 128;
#pragma unroll
  for (int i = 0; i < BN / 2; i += 2) {
    const int m = m0 + wg * 64 + fk::wgmma_acc_row(i, t);
    const int f = f0 + fk::wgmma_acc_col(i, t);
    if (m < pixels && f < K)
      *reinterpret_cast<__nv_bfloat162*>(y + (size_t)m * K + f) = __floats2bfloat162_rn(acc[i], acc[i + 1]);
  }
}
