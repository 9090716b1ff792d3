/* forgek
{
  "name": "grouped_gemm_bf16_mma_sync_tiles",
  "mechanisms": ["cp_async", "mma_sync"],
  "controls": {"tile": ["BM", "BN"], "cp_async": ["STAGES"]},
  "params": {"BM": [64, 128], "BN": [128, 256], "BK": 32, "WM": 64, "WN": 64, "STAGES": [3, 4]},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM*BK + BK*BN)*2"},
  "constraints": ["BM % WM == 0", "BN % WN == 0",
                  "threads >= 64", "threads <= 512",
                  "threads * (WM*WN/32 + 72) <= 65536",
                  "(BM*BK/8) % threads == 0", "(BK*BN/8) % threads == 0",
                  "smem_bytes <= 232448",
                  "N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "grouped_gemm_mma_sync",
     "grid": ["ceil_div(T, BM) + E", "N / BN"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "group_sizes", "C", "T", "N", "K", "E"]}
  ]
}
*/
// A grouped_gemm_bf16 family (the operator's reference before cuBLAS grouped GEMM could be called
// with sizes that sum to T): an mma.sync tensor-core grouped GEMM with BM x BN block tiles (warps
// of 64x64, BK 32, a STAGES-deep cp.async ring; 128x256 with 4 stages takes ~96 KiB of shared
// memory). For expert e, rows [start_e, end_e) of A and C form an ordinary [rows_e, K]·[K, N] GEMM with B[e].
//
// Grid: blockIdx.x enumerates the M-tiles of all experts one after another (fk::expert_slot_of: expert 0's
// ceil(rows_0/BM) tiles, then expert 1's, ...); ceil(T/BM) + E slots always suffice because each
// expert wastes less than one tile. Unused slots exit. blockIdx.y is the N-tile, so blocks that run
// together share one BK x BN column panel of B[e] in L2 while they walk an expert's rows.
//
// The block's BM x BN tile is fk::MmaGemmTile (<forgek/mma_gemm_tile.cuh>): (BM/WM) x (BN/WN) warps
// of WM x WN mma.sync tiles, K in BK steps through a STAGES-deep cp.async ring. Rows past M are
// zero-filled on load and skipped on store; N and K are multiples of BN and BK (constraints).
#include <cuda_bf16.h>
#include <forgek/expert_groups.cuh>
#include <forgek/mma_gemm_tile.cuh>

using Tile = fk::MmaGemmTile<BM, BN, BK, WM, WN, STAGES>;

extern "C" __global__ void __launch_bounds__(Tile::kThreads)
grouped_gemm_mma_sync(const __nv_bfloat16* __restrict__ A,  // [T, K] row-major, rows sorted by expert
                      const __nv_bfloat16* __restrict__ B,  // [E, K, N] row-major
                      const int* __restrict__ group_sizes,  // [E]
                      __nv_bfloat16* __restrict__ C,        // [T, N] row-major
                      int T, int N, int K, int E)
{
  // Slot blockIdx.x is M-tile `slot` of its expert (units of one tile, one slot each).
  fk::ExpertSlot g;
  if (!fk::expert_slot_of(blockIdx.x, group_sizes, T, E, BM, 1, 1, &g)) return;
  // From here on this is a plain [M, K]·[K, N] GEMM on the expert's rows (M = its row count).
  const int M = g.rows, tile_m = g.slot;
  A += (size_t)g.row0 * K;
  C += (size_t)g.row0 * N;
  B += (size_t)g.expert * K * N;

  extern __shared__ __align__(128) unsigned char smem[];  // Tile::kSmemBytes: the cp.async ring
  const int m0 = tile_m * BM, n0 = blockIdx.y * BN;     // this block's BM x BN tile of the expert's C

  Tile tile;
  tile.multiply(A, B, M, N, K, m0, n0, smem);
  tile.store_bf16(C, M, N, m0, n0);
}
