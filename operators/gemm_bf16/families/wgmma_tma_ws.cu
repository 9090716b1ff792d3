/* forgek
{
  "name": "gemm_wgmma_tma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "tma_multicast": ["CLUSTER_M"],
               "raster": ["GROUP_M"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": 64, "STAGES": [3, 4, 5, 6],
             "CLUSTER_M": [1, 2], "GROUP_M": [8, 16]},
  "let": {"smem_bytes": "STAGES*(BM + BN)*BK*2 + 2048"},
  "constraints": ["BM * BN <= 128*256",
                  "BM >= 128 || BN >= 128",
                  "smem_bytes <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "N % BN == 0", "K % BK == 0",
                  "ceil_div(M, BM) % CLUSTER_M == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "BK"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["BK", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_wgmma_tma_ws",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "C", "M", "N", "K"]}
  ]
}
*/
// Warp-specialised Hopper GEMM: C[M,N] = A[M,K] · B[K,N], bf16 in, fp32 accumulate, bf16 out.
//
// Three warpgroups per block. Warpgroup 0 is the producer: it gives most of its registers back
// (setmaxnreg.dec) and one of its threads issues the TMA copies of each k-tile into a STAGES-deep
// ring of shared-memory slots. Warpgroups 1 and 2 are consumers: they take the registers
// (setmaxnreg.inc), wait for a slot to be full and multiply it with wgmma; they keep one k-tile of
// wgmmas in flight and mark a slot empty once the wgmmas reading it have retired. Loading and
// multiplying thus run in different warps and never wait on each other's instructions.
//
// Split of the BM x BN tile between the two consumers:
//   BM >= 128: consumer c owns rows [c*BM/2, (c+1)*BM/2) and all BN columns (BM/128 m64 wgmmas);
//   BM == 64 : consumer c owns all 64 rows and columns [c*BN/2, (c+1)*BN/2) (for M = 64).
//
// Clusters (CLUSTER_M = 2): the two blocks of a cluster compute vertically adjacent tiles that need
// the same B tile, so each block loads half of its 64-column B panels and multicasts them into both
// blocks' shared memory; B traffic from L2 halves. A slot may then be refilled only when the
// consumers of both blocks have released it, so every consumer arrives on the empty barrier of
// every block of the cluster.
//
// Shared-memory layout of one slot (TMA writes it with the 128-byte swizzle, wgmma reads it so):
//   A: [BM rows][64 k]              K-major, one 128 B row per m (box BM x 64 of tmA)
//   B: [BN/64 panels][64 k][64 n]   N-major, one 128 B row per k (BN/64 boxes 64 x 64 of tmB);
//      wgmma reads B "transposed" (tnsp-b = 1) so row-major B needs no copy.
// Rows of A past M (M=64 with BM >= 128) are zero-filled by TMA and never stored.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

#define A_TILE_BYTES (BM * BK * 2)
#define B_PANEL_BYTES (64 * BK * 2)   // 64 columns of B by BK rows
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define CONSUMER_ROWS (BM >= 128 ? BM / 2 : 64)   // rows of the tile one consumer owns
#define CONSUMER_COLS (BM >= 128 ? BN : BN / 2)   // columns of the tile one consumer owns
#define CONSUMER_MI (CONSUMER_ROWS / 64)          // m64 wgmmas per k16 step
#define PRODUCER_REGS 40   // 128*40 + 256*232 <= 65536 registers of the SM
#define CONSUMER_REGS 232

// Block index -> (tile_m, tile_n), walking GROUP_M tile-rows at a time down a column of tiles, so
// the blocks resident together share a few A row-panels and B column-panels in L2 instead of
// streaming all of B once per tile-row. With GROUP_M and the tile-row count both multiples of
// CLUSTER_M, the blocks of one cluster get vertically adjacent tiles in the same tile column.
__device__ __forceinline__ void tile_of_block(int pid, int tiles_m, int tiles_n, int* tile_m, int* tile_n)
{
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = pid % per_group;
  *tile_m = first_m + in_group % group_rows;
  *tile_n = in_group / group_rows;
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_tma_ws(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box BM x 64
                  const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
                  __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                  int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 B and wgmma assumes atoms start 1024-aligned. The
  // offset is the same in every block of a cluster, as multicast requires.
  unsigned char* const base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  unsigned char* const sA = base;                          // STAGES x A tile
  unsigned char* const sB = base + STAGES * A_TILE_BYTES;  // STAGES x B tile
  unsigned long long* const full = reinterpret_cast<unsigned long long*>(sB + STAGES * B_TILE_BYTES);
  unsigned long long* const empty = full + STAGES;  // full[s]: slot s loaded; empty[s]: slot s released

  const int tid = threadIdx.x;
  const int wg = tid / 128;  // 0: producer, 1 and 2: consumers
  const unsigned rank = CLUSTER_M > 1 ? fk::cluster_ctarank() : 0;

  int tile_m, tile_n;
  tile_of_block(blockIdx.x, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int k_tiles = K / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&full[s], 1);               // the producer's arrive.expect_tx; bytes come from TMA
      fk::mbar_init(&empty[s], 2 * CLUSTER_M);  // both consumers of every block of the cluster
    }
    fk::fence_barrier_init();
  }
  // No block may arrive on, or multicast into, a peer whose barriers are not initialised yet.
  if (CLUSTER_M > 1) fk::cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---------------- producer ----------------
    fk::warpgroup_reg_dealloc<PRODUCER_REGS>();
    if (tid == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        // Wait until the (kt/STAGES - 1)-th use of the slot is released; the first pass is free.
        fk::mbar_wait(&empty[s], ((kt / STAGES) & 1) ^ 1);
        fk::mbar_arrive_expect_tx(&full[s], STAGE_BYTES);  // own A + all of B (half may come from the peer)
        fk::tma_load_2d(sA + s * A_TILE_BYTES, &tmA, &full[s], kt * BK, m0);
        for (int p = 0; p < BN / 64; ++p) {
          unsigned char* dst = sB + s * B_TILE_BYTES + p * B_PANEL_BYTES;
          if (CLUSTER_M == 1) fk::tma_load_2d(dst, &tmB, &full[s], n0 + p * 64, kt * BK);
          else if (p % CLUSTER_M == (int)rank)
            fk::tma_load_2d_multicast(dst, &tmB, &full[s], n0 + p * 64, kt * BK, (1u << CLUSTER_M) - 1);
        }
      }
    }
  } else {
    // ---------------- consumers ----------------
    fk::warpgroup_reg_alloc<CONSUMER_REGS>();
    const int c = wg - 1;
    const int row0 = BM >= 128 ? c * CONSUMER_ROWS : 0;  // this consumer's part of the tile
    const int col0 = BM >= 128 ? 0 : c * CONSUMER_COLS;

    float acc[CONSUMER_MI][CONSUMER_COLS / 2];  // one wgmma accumulator fragment per 64-row slice
#pragma unroll
    for (int mi = 0; mi < CONSUMER_MI; ++mi)
#pragma unroll
      for (int i = 0; i < CONSUMER_COLS / 2; ++i) acc[mi][i] = 0.0f;

    // Tell the producer(s) this consumer no longer reads `slot`: with a cluster, the peer block's
    // producer multicasts into this block's slot too, so its empty barrier hears from us as well.
    auto release_slot = [&](int slot) {
      if (tid % 128 != 0) return;
      if (CLUSTER_M == 1) fk::mbar_arrive(&empty[slot]);
      else
        for (unsigned cta = 0; cta < CLUSTER_M; ++cta) fk::mbar_arrive_cluster_release(&empty[slot], cta);
    };

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % STAGES;
      fk::mbar_wait(&full[s], (kt / STAGES) & 1);  // the slot's (kt/STAGES)-th fill has landed

      const unsigned char* a = sA + s * A_TILE_BYTES + row0 * 128;
      const unsigned char* b = sB + s * B_TILE_BYTES + (col0 / 64) * B_PANEL_BYTES;
      fk::wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < BK / 16; ++k16)  // A: 16 k = 32 B along the row; B: 16 k rows = 2048 B
#pragma unroll
        for (int mi = 0; mi < CONSUMER_MI; ++mi)
          fk::wgmma_m64k16_bf16<CONSUMER_COLS>(acc[mi], fk::wgmma_desc_kmajor_128b(a + mi * 64 * 128 + k16 * 32),
                                               fk::wgmma_desc_nmajor_128b(b + k16 * 16 * 128, B_PANEL_BYTES));
      fk::wgmma_commit();
      // Keep this k-tile's wgmmas in flight and wait only for the previous k-tile's: its slot can
      // then be handed back while the tensor cores still have work queued from this warpgroup.
      fk::wgmma_wait<1>();
      if (kt > 0) release_slot((kt - 1) % STAGES);
    }
    fk::wgmma_wait<0>();  // the last slot is never refilled, so it needs no release

    // Epilogue: accumulator i of thread (warp w, lane l) in a 64-row slice is
    // C[16w + l/4 + 8*((i/2)%2)][8*(i/4) + 2*(l%4) + i%2]; adjacent columns go out as one bf16x2.
    const int warp = (tid % 128) / 32, lane = tid % 32;
#pragma unroll
    for (int mi = 0; mi < CONSUMER_MI; ++mi)
#pragma unroll
      for (int j = 0; j < CONSUMER_COLS / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + row0 + mi * 64 + warp * 16 + lane / 4 + 8 * h;
          const int col = n0 + col0 + j * 8 + 2 * (lane % 4);
          if (row < M)
            *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
                __floats2bfloat162_rn(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
        }
  }

  // A block must outlive the peer's last arrivals on its empty barriers and multicasts into it.
  if (CLUSTER_M > 1) {
    __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
    fk::cluster_sync();
  }
}
