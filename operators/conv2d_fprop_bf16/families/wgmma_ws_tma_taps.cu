/* forgek
{
  "name": "conv2d_wgmma_ws_tma_taps",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast", "persistent_grid"],
  "controls": {"tile": ["BM", "BN"], "pixel_block": ["BW"], "mbarrier_pipeline": ["STAGES"],
               "tma_multicast": ["CLUSTER_M"], "raster": ["GROUP_M"], "warp_specialization": ["SCHEDULE"],
               "tma_store": ["EPI"],
               "staging_writes": ["STSM"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BW": [8, 16, 32, 64], "STAGES": [3, 4, 5, 6],
             "CLUSTER_M": [1, 2], "GROUP_M": [1, 8], "SCHEDULE": [0, 1], "EPI": [0, 1, 2], "STSM": [0, 1]},
  "let": {"BH": "64 / BW",
          "cons_cols": "BN / (1 + (1 - SCHEDULE)*(BM == 64))",
          "staging": "(EPI > 0)*(1024 + 2*EPI*8192)",
          "smem_bytes": "STAGES*(BM + BN)*128 + 1024 + STAGES*16 + staging",
          "pixel_blocks": "N * ceil_div(H, BH) * ceil_div(W, BW)",
          "units": "ceil_div(ceil_div(pixel_blocks, BM / 64), CLUSTER_M) * (K / BN)",
          "ctas": "min(units, num_sms / CLUSTER_M) * CLUSTER_M"},
  "constraints": ["BM * BN <= 128*256",
                  "BM >= 128 || BN >= 128",
                  "SCHEDULE == 0 || BM * BN <= 128*128",
                  "smem_bytes + 4 * BM / 64 <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "K % BN == 0", "C % 64 == 0", "R % 2 == 1", "S % 2 == 1",
                  "N < 1023", "H + BH <= 2047", "W + BW <= 2047",
                  "EPI == 0 || (cons_cols / 64) % EPI == 0", "EPI > 0 || STSM == 0"],
  "tensor_maps": [
    {"name": "tmX", "tensor": "x", "box": ["1", "BH", "BW", "64"], "swizzle": "128B"},
    {"name": "tmW", "tensor": "w", "shape": ["K", "R*S*C"], "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmY", "tensor": "y", "box": ["1", "BH", "BW", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "conv2d_wgmma_ws_tma_taps",
     "grid": ["ctas"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmX", "tmW", "tmY", "y", "N", "H", "W", "C", "K", "R", "S"]}
  ]
}
*/
// Implicit-GEMM convolution (NHWC, stride 1, 'same' zero padding) on Hopper: every operand arrives by
// TMA, warp-specialised wgmma consumes it, a persistent grid walks the output tiles.
//   GEMM view: y[m, f] = sum_t a[m, t] * w[f, t]; m an output pixel, f a filter (the GEMM's N = K), t =
//   (r, s, c) a tap (the GEMM's K = R*S*C, w's KRSC row, so w viewed as [K, R*S*C] is the wgmma's
//   K-major B operand as it stands).
// Pixels are taken in blocks of BH x BW = 64 (BH = 64 / BW) of one image: an M tile is BM / 64 blocks
// in a row of the order (n, block row, block column). For a k-tile (tap (r, s), channels [c0, c0 + 64))
// the A rows of a block are x[n, h0 + r - R/2 .. + BH, w0 + s - S/2 .. + BW, c0 .. + 64): one 4-D TMA
// box of x [N, H, W, C], 64 pixels x 128 B. TMA reads coordinates outside the image (negative, or past
// H / W) as zero, which is the padding; the box lands as [64 rows][128 B] 128B-swizzled, the very slot
// layout a 2-D tile has, so the mainloop is fk::WgmmaPipeline's (produce_with) unchanged. A block that
// overhangs the image (H % BH, W % BW) computes pixels that do not exist, and no store writes them.
// Slot of the ring: A [BM][64 k] as BM / 64 boxes; B BN/64 panels of [64 filters][64 k], K-major.
// The blocks of a cluster hold adjacent M tiles and multicast halves of their common B tile.
// SCHEDULE: 0 cooperative (both consumers on each tile), 1 ping-pong (alternate tiles, one's
// epilogue under the other's mainloop). EPI: 0 bf16x2 stores straight from the accumulators (pixels
// outside the image skipped); n: fk::WgmmaTmaStore, n 64x64 panels per round, each panel one block's
// 64 pixels x 64 filters, stored by a 4-D TMA box of y [N, H, W, K] that TMA clips to the image.
// STSM (EPI > 0): the staging written by stmatrix, four 8x8 matrices a warp instruction (1), or by
// 4-byte stores (0).
#include <cuda_bf16.h>
#include <forgek/wgmma_pipeline.cuh>

constexpr int BH = 64 / BW;          // a block of pixels: BH rows x BW columns of one image
constexpr int BLOCKS = BM / 64;      // pixel blocks per M tile
constexpr int kBoxBytes = 64 * 128;  // one block's 64 pixels x 64 channels

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16KMajorB, SCHEDULE>;
using Store = fk::WgmmaTmaStore<Pipe, (EPI > 0 ? EPI : 1), STSM != 0>;  // used when EPI > 0

// The image grid of pixel blocks, and one block's corner.
struct PixelBlocks {
  int per_row, per_image, total;  // blocks across W, in an image, in the batch
  __device__ PixelBlocks(int N, int H, int W)
      : per_row(fk::ceil_div(W, BW)), per_image(fk::ceil_div(H, BH) * per_row), total(N * per_image) {}
};
struct BlockCorner {
  int n, h0, w0;  // n >= N: a padding block past the batch (reads zeros, stores nothing)
};
__device__ __forceinline__ BlockCorner corner_of(const PixelBlocks& g, int block)
{
  const int n = block / g.per_image, in_image = block - n * g.per_image;
  const int row = in_image / g.per_row;
  return BlockCorner{n, row * BH, (in_image - row * g.per_row) * BW};
}

// A corner in one word: n in bits 22-31, h0 in 11-21, w0 in 0-10 (the constraints bound N, H, W).
__device__ __forceinline__ unsigned pack(BlockCorner c) { return (unsigned)c.n << 22 | (unsigned)c.h0 << 11 | c.w0; }
__device__ __forceinline__ BlockCorner unpack(unsigned p)
{
  return BlockCorner{(int)(p >> 22), (int)(p >> 11 & 2047u), (int)(p & 2047u)};
}

// Unit u -> this block's output tile: its first pixel block and first filter.
struct ConvTile {
  int block0;  // pixel blocks [block0, block0 + BLOCKS)
  int f0;      // filters [f0, f0 + BN)
};
__device__ __forceinline__ ConvTile tile_of_unit(int u, int units_m, int tiles_n, int rank)
{
  int unit_m, tile_n;
  fk::grouped_raster(u, GROUP_M, units_m, tiles_n, &unit_m, &tile_n);
  return ConvTile{(unit_m * CLUSTER_M + rank) * BLOCKS, tile_n * BN};
}

extern "C" __global__ void __launch_bounds__(384, 1)
conv2d_wgmma_ws_tma_taps(const __grid_constant__ CUtensorMap tmX,  // x [N, H, W, C], box 1 x BH x BW x 64
                         const __grid_constant__ CUtensorMap tmW,  // w as [K, R*S*C], box 64 x 64
                         const __grid_constant__ CUtensorMap tmY,  // y [N, H, W, K], box 1 x BH x BW x 64
                         __nv_bfloat16* __restrict__ y,            // [N, H, W, K]
                         int N, int H, int W, int C, int K, int R, int S)
{
  extern __shared__ unsigned char smem_raw[];  // Pipe::kSmemBytes (+ 1024 + Store::kSmemBytes, EPI > 0)
  __shared__ unsigned corners[BLOCKS];          // the producer's current tile: its blocks' corners, packed
  Pipe pipe(smem_raw);
  pipe.init();

  const PixelBlocks grid(N, H, W);
  const int tiles_n = K / BN, c_tiles = C / 64, k_tiles = R * S * c_tiles;
  const int units_m = fk::ceil_div(fk::ceil_div(grid.total, BLOCKS), CLUSTER_M);
  const int units = units_m * tiles_n;
  const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;
  const int rank = CLUSTER_M > 1 ? (int)fk::cluster_ctarank() : 0;

  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int u = first; u < units; u += stride) {
        const ConvTile t = tile_of_unit(u, units_m, tiles_n, rank);
        // The producer thread runs on 40 registers (setmaxnreg): the tile's block corners wait in shared
        // memory, packed (kept in registers they spilled with 2-CTA clusters).
#pragma unroll
        for (int b = 0; b < BLOCKS; ++b) corners[b] = pack(corner_of(grid, t.block0 + b));
        // k-tiles in the order of w's KRSC row (so B's k coordinate is kt * 64): taps (r, s) row-major,
        // 64 channels at a time within each; the tap is stepped, not divided out of kt (registers again).
        int c0 = 0, dh = -(R / 2), dw = -(S / 2);
        pipe.produce_with(
            [&](void* dst, unsigned long long* full, int) {
#pragma unroll
              for (int b = 0; b < BLOCKS; ++b) {
                const BlockCorner corner = unpack(corners[b]);
                fk::tma_load_4d(static_cast<unsigned char*>(dst) + b * kBoxBytes, &tmX, full, c0, corner.w0 + dw,
                                corner.h0 + dh, corner.n);
              }
              if ((c0 += 64) == C) {
                c0 = 0;
                if (++dw > S / 2) dw = -(S / 2), ++dh;
              }
            },
            &tmW, t.f0, 0, k_tiles);
      }
  } else {
    const int consumer = Pipe::become_consumer();
    for (int u = first, j = 0; u < units; u += stride, ++j) {
      if (!Pipe::owns(consumer, j)) {
        pipe.skip(k_tiles);
        continue;
      }
      const ConvTile t = tile_of_unit(u, units_m, tiles_n, rank);
      Pipe::Acc acc;  // [Pipe::kMi m64 slices][Pipe::kCols/2 floats]: this consumer's part of the tile
      pipe.consume(acc, consumer, k_tiles, j > 0, u + stride < units);
      if (EPI > 0) {
        // Panel at tile-relative (r, c): block r / 64's 64 pixels x filters [f0 + c, f0 + c + 64).
        Store(pipe, consumer).store(
            acc, consumer, [](int, int, float v0, float v1) { return __floats2bfloat162_rn(v0, v1); },
            [&](const void* panel, int r, int c) {
              const BlockCorner b = corner_of(grid, t.block0 + r / 64);
              if (b.n < N) fk::tma_store_4d(&tmY, panel, t.f0 + c, b.w0, b.h0, b.n);
            });
        continue;
      }
      Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
        const BlockCorner b = corner_of(grid, t.block0 + r / 64);
        const int h = b.h0 + (r % 64) / BW, w = b.w0 + r % BW;
        if (b.n < N && h < H && w < W)
          *reinterpret_cast<__nv_bfloat162*>(y + (((size_t)b.n * H + h) * W + w) * K + t.f0 + c) =
              __floats2bfloat162_rn(v0, v1);
      });
    }
    if (EPI > 0) Store(pipe, consumer).drain();
  }
  pipe.finish();
}
