/* forgek
{
  "name": "gemm_wgmma_tma",
  "archs": ["sm90"],
  "mechanisms": ["tma", "wgmma", "mbarrier_pipeline"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "raster": ["GROUP_M"]},
  "params": {"BM": [64, 128], "BN": [64, 128, 256], "BK": 64, "STAGES": [3, 4, 5, 6], "GROUP_M": [8, 16]},
  "let": {"threads": "BM/64*128",
          "smem_bytes": "STAGES*(BM + BN)*BK*2 + 2048"},
  "constraints": ["smem_bytes <= 232448", "N % BN == 0", "K % BK == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "BK"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["BK", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_wgmma_tma",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "C", "M", "N", "K"]}
  ]
}
*/
// Hopper GEMM without specialisation: C[M,N] = A[M,K] · B[K,N], bf16 in, fp32 accumulate, bf16 out.
//
// A block computes a BM x BN tile of C with BM/64 warpgroups; warpgroup w owns rows [64w, 64w+64)
// and all BN columns, accumulated by wgmma.m64nBNk16 in registers (BN/2 floats per thread).
// K advances in 64-wide k-tiles through a STAGES-deep ring of shared-memory slots. Thread 0 also
// acts as the loader: it issues the TMA copies of k-tile kt+STAGES-1 once every warpgroup has
// released the slot, so the copies overlap the multiplications of the tiles before it.
//
// Shared-memory layout of one slot (TMA writes it with the 128-byte swizzle, wgmma reads it so):
//   A: [BM rows][64 k]              K-major, one 128 B row per m (box BM x 64 of tmA)
//   B: [BN/64 panels][64 k][64 n]   N-major, one 128 B row per k (BN/64 boxes 64 x 64 of tmB);
//      wgmma reads B "transposed" (tnsp-b = 1) so row-major B needs no copy.
// Rows of A past M (the M=64 config with BM=128) are zero-filled by TMA and never stored.
#include <cuda_bf16.h>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

#define THREADS (BM / 64 * 128)
#define A_TILE_BYTES (BM * BK * 2)
#define B_PANEL_BYTES (64 * BK * 2)   // 64 columns of B by BK rows
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)

// Block index -> (tile_m, tile_n), walking GROUP_M tile-rows at a time down a column of tiles, so
// the blocks resident together share a few A row-panels and B column-panels in L2 instead of
// streaming all of B once per tile-row.
__device__ __forceinline__ void tile_of_block(int pid, int tiles_m, int tiles_n, int* tile_m, int* tile_n)
{
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = pid % per_group;
  *tile_m = first_m + in_group % group_rows;
  *tile_n = in_group / group_rows;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wgmma_tma(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box BM x 64
               const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
               __nv_bfloat16* __restrict__ C,            // [M, N] row-major
               int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 B and wgmma assumes atoms start 1024-aligned.
  unsigned char* const base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  unsigned char* const sA = base;                          // STAGES x A tile
  unsigned char* const sB = base + STAGES * A_TILE_BYTES;  // STAGES x B tile
  unsigned long long* const full = reinterpret_cast<unsigned long long*>(sB + STAGES * B_TILE_BYTES);
  unsigned long long* const empty = full + STAGES;  // full[s]: slot s loaded; empty[s]: slot s released

  const int tid = threadIdx.x;
  const int wg = tid / 128;  // this warpgroup's 64 rows of the tile

  int tile_m, tile_n;
  tile_of_block(blockIdx.x, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int k_tiles = K / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&full[s], 1);          // the loader's arrive.expect_tx; the bytes come from TMA
      fk::mbar_init(&empty[s], BM / 64);   // one arrival per warpgroup done reading the slot
    }
    fk::fence_barrier_init();
  }
  __syncthreads();

  // Loader (thread 0): k-tile kt into slot s; full[s] completes when all STAGE_BYTES have landed.
  auto issue_loads = [&](int kt, int s) {
    fk::mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
    fk::tma_load_2d(sA + s * A_TILE_BYTES, &tmA, &full[s], kt * BK, m0);
    for (int p = 0; p < BN / 64; ++p)
      fk::tma_load_2d(sB + s * B_TILE_BYTES + p * B_PANEL_BYTES, &tmB, &full[s], n0 + p * 64, kt * BK);
  };
  if (tid == 0)
    for (int kt = 0; kt < STAGES - 1 && kt < k_tiles; ++kt) issue_loads(kt, kt);

  float acc[BN / 2];  // wgmma accumulator fragment of the warpgroup's 64 x BN tile
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % STAGES;
    fk::mbar_wait(&full[s], (kt / STAGES) & 1);  // the slot's (kt/STAGES)-th fill has landed

    const unsigned char* a = sA + s * A_TILE_BYTES + wg * 64 * 128;  // this warpgroup's 64 rows
    const unsigned char* b = sB + s * B_TILE_BYTES;
    fk::wgmma_fence();
#pragma unroll
    for (int k16 = 0; k16 < BK / 16; ++k16)  // A: 16 k = 32 B along the row; B: 16 k rows = 2048 B
      fk::wgmma_m64k16_bf16<BN>(acc, fk::wgmma_desc_kmajor_128b(a + k16 * 32),
                                fk::wgmma_desc_nmajor_128b(b + k16 * 16 * 128, B_PANEL_BYTES));
    fk::wgmma_commit();
    fk::wgmma_wait<0>();  // this warpgroup no longer reads slot s
    if (tid % 128 == 0) fk::mbar_arrive(&empty[s]);

    // Refill the slot released one iteration ago with the k-tile STAGES-1 ahead.
    const int next = kt + STAGES - 1;
    if (tid == 0 && next < k_tiles) {
      const int ns = next % STAGES;
      if (next >= STAGES) fk::mbar_wait(&empty[ns], (next / STAGES - 1) & 1);
      issue_loads(next, ns);
    }
  }

  // Epilogue: accumulator i of thread (warp w, lane l) is C[16w + l/4 + 8*((i/2)%2)][8*(i/4) + 2*(l%4) + i%2]
  // of the warpgroup's 64 x BN tile; pairs of adjacent columns go out as one bf16x2.
  const int warp = (tid % 128) / 32, lane = tid % 32;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + wg * 64 + warp * 16 + lane / 4 + 8 * h;
      const int col = n0 + j * 8 + 2 * (lane % 4);
      if (row < M)
        *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
            __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
}
