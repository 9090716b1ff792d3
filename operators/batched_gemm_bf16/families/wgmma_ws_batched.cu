/* forgek
{
  "name": "batched_gemm_wgmma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast", "persistent_grid"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "tma_multicast": ["CLUSTER_M"],
               "persistent_grid": ["PERSISTENT"], "warp_specialization": ["SCHEDULE"], "tma_store": ["EPI"],
               "staging_writes": ["STSM"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "STAGES": [3, 4, 5, 6], "CLUSTER_M": [1, 2],
             "PERSISTENT": [0, 1], "SCHEDULE": [0, 1], "EPI": [0, 1, 2], "STSM": [0, 1]},
  "let": {"cons_cols": "BN / (1 + (1 - SCHEDULE)*(BM == 64))",
          "staging": "(EPI > 0)*(1024 + 2*EPI*8192)",
          "smem_bytes": "STAGES*(BM + BN)*128 + 1024 + STAGES*16 + staging",
          "tiles_m": "ceil_div(M, BM)",
          "units": "BATCH * tiles_m / CLUSTER_M * (N / BN)",
          "ctas": "(PERSISTENT*min(units, num_sms / CLUSTER_M) + (1 - PERSISTENT)*units) * CLUSTER_M"},
  "constraints": ["BM * BN <= 128*256",
                  "BM >= 128 || BN >= 128",
                  "SCHEDULE == 0 || (PERSISTENT == 1 && BM * BN <= 128*128)",
                  "smem_bytes <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "N % BN == 0", "K % 64 == 0",
                  "tiles_m % CLUSTER_M == 0",
                  "EPI == 0 || (cons_cols / 64) % EPI == 0", "EPI > 0 || STSM == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "shape": ["BATCH*M", "K"], "box": ["BM", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "shape": ["BATCH*K", "N"], "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmC", "tensor": "C", "shape": ["BATCH", "M", "N"], "box": ["1", "64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "batched_gemm_wgmma_ws",
     "grid": ["ctas"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "tmC", "C", "BATCH", "M", "N", "K"]}
  ]
}
*/
// Hopper batched GEMM: C[b] = A[b] · B[b] for b < BATCH, bf16 in, fp32 accumulate, bf16 out, every
// batch entry densely packed.
//
// One tile space over the whole batch: tile t is batch entry b = t / (tiles_m * tiles_n), and inside
// an entry the tiles go down each column of tiles first, so the blocks of a cluster (CLUSTER_M
// consecutive tiles, tiles_m a multiple of CLUSTER_M) hold vertically adjacent tiles of one entry that
// share their B tile, which they multicast (a "unit" of tiles). PERSISTENT picks the grid:
//   0: one block (cluster) per tile (unit), the hardware scheduling them as blocks retire;
//   1: num_sms / CLUSTER_M clusters that each walk units u, u + #clusters, ...; the producer runs ahead into
//      the next tile while the consumers are still storing the last one (with K = 512 a tile is only
//      8 k-tiles, so the fill of a fresh block is a large share of its time).
// SCHEDULE picks how the two consumer warpgroups share the work:
//   0: cooperative, both on each tile (BM >= 128: consumer c owns rows [c*BM/2, (c+1)*BM/2); BM = 64:
//      columns [c*BN/2, (c+1)*BN/2));
//   1: ping-pong (persistent only), consumer c takes the block's tiles j with j % 2 == c, whole
//      (BM x BN <= 128 x 128), the two alternating at the tensor cores so that one's epilogue runs under
//      the other's mainloop; with 8 k-tiles per tile the epilogue is a large share too.
//
// EPI picks how C leaves the consumers:
//   0: bf16x2 stores straight from the accumulators;
//   n: fk::WgmmaTmaStore, n 64x64 panels per round staged (128B-swizzled) in shared memory and written by
//      TMA stores through a [BATCH, M, N] view (rows past M clipped per entry) that stay in flight while
//      the consumer starts its next tile.
//
// The mainloop is fk::WgmmaPipeline (<forgek/wgmma_pipeline.cuh>) over 2-D views of the batch:
//   A viewed as [BATCH*M, K]: entry b's rows start at b*M. A tile whose rows pass M (M % BM != 0) reads
//     the first rows of entry b+1 (or TMA's zero fill past the last entry); those rows are never stored.
//   B viewed as [BATCH*K, N]: entry b's k rows start at b*K (b_k0); K % 64 == 0, so no k-tile straddles
//     two entries.
// Slot of the ring: A [BM][64 k] K-major; B BN/64 panels of [64 k][64 n] N-major.
// STSM (EPI > 0): the staging written by stmatrix, four 8x8 matrices a warp instruction (1), or by
// 4-byte stores (0).
#include <cuda_bf16.h>
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16, SCHEDULE>;
using Store = fk::WgmmaTmaStore<Pipe, (EPI > 0 ? EPI : 1), STSM != 0>;  // used when EPI > 0

extern "C" __global__ void __launch_bounds__(384, 1)
batched_gemm_wgmma_ws(const __grid_constant__ CUtensorMap tmA,  // A as [BATCH*M, K], box BM x 64
                      const __grid_constant__ CUtensorMap tmB,  // B as [BATCH*K, N], box 64 x 64
                      const __grid_constant__ CUtensorMap tmC,  // C as [BATCH, M, N], box 1 x 64 x 64
                      __nv_bfloat16* __restrict__ C,            // [BATCH, M, N]
                      int batch, int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];  // Pipe::kSmemBytes (+ 1024 + Store::kSmemBytes, EPI > 0)
  Pipe pipe(smem_raw);
  pipe.init();

  const int tiles_m = (M + BM - 1) / BM, tiles_per_entry = tiles_m * (N / BN);
  const int units = batch * tiles_per_entry / CLUSTER_M;
  const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;
  const int rank = CLUSTER_M > 1 ? (int)fk::cluster_ctarank() : 0;
  const int k_tiles = K / 64;

  // Unit u -> (entry, m0, n0) of this block's tile.
  auto tile_of = [&](int u, int* b, int* m0, int* n0) {
    const int t = u * CLUSTER_M + rank;
    *b = t / tiles_per_entry;
    const int in_entry = t % tiles_per_entry;
    *m0 = (in_entry % tiles_m) * BM;
    *n0 = (in_entry / tiles_m) * BN;
  };

  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int u = first; u < units; u += stride) {
        int b, m0, n0;
        tile_of(u, &b, &m0, &n0);
        pipe.produce(&tmA, &tmB, b * M + m0, n0, b * K, k_tiles);
      }
  } else {
    const int consumer = Pipe::become_consumer();
    for (int u = first, j = 0; u < units; u += stride, ++j) {
      if (!Pipe::owns(consumer, j)) {
        pipe.skip(k_tiles);
        continue;
      }
      int b, m0, n0;
      tile_of(u, &b, &m0, &n0);
      Pipe::Acc acc;  // [Pipe::kMi m64 slices][Pipe::kCols/2 floats]: this consumer's part of the tile
      pipe.consume(acc, consumer, k_tiles, j > 0, u + stride < units);
      if (EPI > 0) {
        Store(pipe, consumer).store(
            acc, consumer, [](int, int, float v0, float v1) { return __floats2bfloat162_rn(v0, v1); },
            [&](const void* panel, int r, int c) { fk::tma_store_3d(&tmC, panel, n0 + c, m0 + r, b); });
        continue;
      }
      __nv_bfloat16* Cb = C + (size_t)b * M * N;
      Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
        if (m0 + r < M)
          *reinterpret_cast<__nv_bfloat162*>(Cb + (size_t)(m0 + r) * N + n0 + c) = __floats2bfloat162_rn(v0, v1);
      });
    }
    if (EPI > 0) Store(pipe, consumer).drain();
  }
  pipe.finish();
}
