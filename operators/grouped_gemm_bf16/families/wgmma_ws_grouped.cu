/* forgek
{
  "name": "grouped_gemm_wgmma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast", "persistent_grid"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "tma_multicast": ["CLUSTER_M"],
               "raster": ["GROUP_M"], "warp_specialization": ["SCHEDULE"], "tma_store": ["EPI"],
               "staging_writes": ["STSM"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "STAGES": [3, 4, 5, 6], "CLUSTER_M": [1, 2],
             "GROUP_M": [1, 4, 16, 64], "SCHEDULE": [0, 1], "EPI": [0, 1, 2], "STSM": [0, 1]},
  "let": {"cons_cols": "BN / (1 + (1 - SCHEDULE)*(BM == 64))",
          "staging": "(EPI > 0)*(1024 + 2*EPI*8192)",
          "smem_bytes": "STAGES*(BM + BN)*128 + 1024 + STAGES*16 + staging",
          "units_bound": "(ceil_div(ceil_div(T, BM), CLUSTER_M) + E) * (N / BN)",
          "ctas": "min(units_bound, num_sms / CLUSTER_M) * CLUSTER_M"},
  "constraints": ["BM * BN <= 128*256",
                  "BM >= 128 || BN >= 128",
                  "SCHEDULE == 0 || BM * BN <= 128*128",
                  "smem_bytes <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "N % BN == 0", "K % 64 == 0",
                  "EPI == 0 || (cons_cols / 64) % EPI == 0", "EPI > 0 || STSM == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "shape": ["T", "K"], "box": ["BM", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "shape": ["E*K", "N"], "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmC", "tensor": "C", "shape": ["T", "N"], "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "grouped_gemm_wgmma_ws",
     "grid": ["ctas"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "tmC", "C", "group_sizes", "T", "N", "K", "E"]}
  ]
}
*/
// Hopper grouped (MoE) GEMM: for each expert e, C[rows of e] = A[rows of e] · B[e], bf16 in, fp32
// accumulate, bf16 out; the experts' runs of rows come from group_sizes on the device
// (<forgek/expert_groups.cuh>, the operator's boundary rule), so one launch serves every split.
//
// Persistent grid: min(units, num_sms / CLUSTER_M) clusters walk one tile space over all experts,
// units u, u + #clusters, ... (the grid is sized from T and E alone; a block stops at the first unit
// past the last expert's). Expert e has ceil(rows_e / BM) row tiles, grouped CLUSTER_M at a time into
// units (the blocks of a cluster hold vertically adjacent tiles of one expert and multicast halves of
// their common B tile; a tile of a unit that lies past the expert's rows is computed and not stored),
// times N / BN column tiles. Inside an expert the units go GROUP_M unit-rows at a time down each column
// of tiles (fk::grouped_raster): B[e] (K x N, the big operand) is read once per GROUP_M unit-rows,
// A's rows of the expert once per column group.
//
// The mainloop is fk::WgmmaPipeline (<forgek/wgmma_pipeline.cuh>) over 2-D views:
//   A [T, K]: a tile's TMA box starts at the expert's first row + m0; rows past the expert's end belong
//     to the next expert (or are TMA's zero fill past T) and are never stored.
//   B viewed as [E*K, N]: expert e's k rows start at e*K; K % 64 == 0, so no k-tile straddles two experts.
// Slot of the ring: A [BM][64 k] K-major; B BN/64 panels of [64 k][64 n] N-major.
// SCHEDULE picks how the two consumer warpgroups share the work:
//   0: cooperative, both on each tile (BM >= 128: consumer c owns rows [c*BM/2, (c+1)*BM/2); BM = 64:
//      columns [c*BN/2, (c+1)*BN/2));
//   1: ping-pong, consumer c takes the block's tiles j with j % 2 == c, whole (BM x BN <= 128 x 128),
//      one's epilogue under the other's mainloop.
// EPI picks how C leaves the consumers:
//   0: bf16x2 stores straight from the accumulators, rows past the expert's end skipped;
//   n: a tile wholly inside its expert goes through fk::WgmmaTmaStore (n 64x64 panels per round staged
//      128B-swizzled, TMA stores left in flight under the next tile); a tile that crosses the expert's
//      end (at most one per expert and column) still takes the masked bf16x2 stores, since a TMA box
//      would overwrite the next expert's rows.
// STSM (EPI > 0): the staging written by stmatrix, four 8x8 matrices a warp instruction (1), or by
// 4-byte stores (0).
#include <cuda_bf16.h>
#include <forgek/expert_groups.cuh>
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16, SCHEDULE>;
using Store = fk::WgmmaTmaStore<Pipe, (EPI > 0 ? EPI : 1), STSM != 0>;  // used when EPI > 0

// One block's tile of a unit: its expert, the expert's run of rows, and the tile's corner in it.
struct ExpertTile {
  int expert;
  int row0;  // the expert's first row of A and C
  int rows;  // the expert's row count
  int m0;    // the tile's first row, relative to row0 (may lie past `rows`: a cluster's padding tile)
  int n0;    // the tile's first column of B[e] and C
};

// Unit u -> this block's tile (`rank` in its cluster); false for a unit past the last expert's.
__device__ __forceinline__ bool tile_of_unit(int u, const int* __restrict__ group_sizes, int T, int E, int tiles_n,
                                             int rank, ExpertTile* tile)
{
  fk::ExpertSlot g;
  if (!fk::expert_slot_of(u, group_sizes, T, E, BM, CLUSTER_M, tiles_n, &g)) return false;
  int unit_m, tile_n;
  fk::grouped_raster(g.slot, GROUP_M, g.m_units, tiles_n, &unit_m, &tile_n);
  *tile = ExpertTile{g.expert, g.row0, g.rows, (unit_m * CLUSTER_M + rank) * BM, tile_n * BN};
  return true;
}

extern "C" __global__ void __launch_bounds__(384, 1)
grouped_gemm_wgmma_ws(const __grid_constant__ CUtensorMap tmA,  // A [T, K], box BM x 64
                      const __grid_constant__ CUtensorMap tmB,  // B as [E*K, N], box 64 x 64
                      const __grid_constant__ CUtensorMap tmC,  // C [T, N], box 64 x 64
                      __nv_bfloat16* __restrict__ C,            // [T, N]
                      const int* __restrict__ group_sizes,      // [E]
                      int T, int N, int K, int E)
{
  extern __shared__ unsigned char smem_raw[];  // Pipe::kSmemBytes (+ 1024 + Store::kSmemBytes, EPI > 0)
  Pipe pipe(smem_raw);
  pipe.init();

  const int tiles_n = N / BN, k_tiles = K / 64;
  const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;
  const int rank = CLUSTER_M > 1 ? (int)fk::cluster_ctarank() : 0;
  ExpertTile t;

  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int u = first; tile_of_unit(u, group_sizes, T, E, tiles_n, rank, &t); u += stride)
        pipe.produce(&tmA, &tmB, t.row0 + t.m0, t.n0, t.expert * K, k_tiles);
  } else {
    const int consumer = Pipe::become_consumer();
    // Each unit's tile is looked up once: as the block's next tile (ping-pong hands the tensor cores
    // to the other consumer only when there is one), then as its current one.
    ExpertTile next;
    bool more = tile_of_unit(first, group_sizes, T, E, tiles_n, rank, &next);
    for (int u = first, j = 0; more; u += stride, ++j) {
      t = next;
      more = tile_of_unit(u + stride, group_sizes, T, E, tiles_n, rank, &next);
      if (!Pipe::owns(consumer, j)) {
        pipe.skip(k_tiles);
        continue;
      }
      Pipe::Acc acc;  // [Pipe::kMi m64 slices][Pipe::kCols/2 floats]: this consumer's part of the tile
      pipe.consume(acc, consumer, k_tiles, j > 0, more);
      const int valid_rows = t.rows - t.m0;  // rows of the tile inside its expert (<= 0: padding)
      if (EPI > 0 && valid_rows >= BM) {
        Store(pipe, consumer).store(
            acc, consumer, [](int, int, float v0, float v1) { return __floats2bfloat162_rn(v0, v1); },
            [&](const void* panel, int r, int c) { fk::tma_store_2d(&tmC, panel, t.n0 + c, t.row0 + t.m0 + r); });
        continue;
      }
      if (valid_rows <= 0) continue;
      __nv_bfloat16* Ct = C + (size_t)(t.row0 + t.m0) * N + t.n0;  // the tile's corner of C
      Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
        if (r < valid_rows) *reinterpret_cast<__nv_bfloat162*>(Ct + (size_t)r * N + c) = __floats2bfloat162_rn(v0, v1);
      });
    }
    if (EPI > 0) Store(pipe, consumer).drain();
  }
  pipe.finish();
}
