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
// The mainloop is fk::WgmmaPipeline (<forgek/wgmma_pipeline.cuh>). Three warpgroups per block.
// Warpgroup 0 is the producer: it gives most of its registers back (setmaxnreg.dec) and one of its
// threads issues the TMA copies of each k-tile into a STAGES-deep ring of shared-memory slots.
// Warpgroups 1 and 2 are consumers: they take the registers (setmaxnreg.inc), wait for a slot to be
// full and multiply it with wgmma; they keep one k-tile of wgmmas in flight and mark a slot empty once
// the wgmmas reading it have retired. Loading and multiplying thus run in different warps and never
// wait on each other's instructions.
//
// Split of the BM x BN tile between the two consumers:
//   BM >= 128: consumer c owns rows [c*BM/2, (c+1)*BM/2) and all BN columns (BM/128 m64 wgmmas);
//   BM == 64 : consumer c owns all 64 rows and columns [c*BN/2, (c+1)*BN/2) (for M = 64).
//
// Clusters (CLUSTER_M = 2): the two blocks of a cluster compute vertically adjacent tiles that need
// the same B tile, so each block loads half of its 64-column B panels and multicasts them into both
// blocks' shared memory; B traffic from L2 halves. A slot may then be refilled only when the
// consumers of both blocks have released it (remote arrives with .release.cta: see the pipeline).
//
// Shared-memory layout of one slot (TMA writes it with the 128-byte swizzle, wgmma reads it so):
//   A: [BM rows][64 k]              K-major, one 128 B row per m (box BM x 64 of tmA)
//   B: [BN/64 panels][64 k][64 n]   N-major, one 128 B row per k (BN/64 boxes 64 x 64 of tmB);
//      wgmma reads B "transposed" (tnsp-b = 1) so row-major B needs no copy.
// Rows of A past M (M=64 with BM >= 128) are zero-filled by TMA and never stored.
// Blocks walk the tiles GROUP_M tile-rows at a time (fk::grouped_raster): with GROUP_M and the tile-row
// count multiples of CLUSTER_M, the blocks of a cluster get vertically adjacent tiles.
#include <cuda_bf16.h>
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16>;
static_assert(BK == fk::WgmmaBf16::k_tile, "a k-tile is one 128-byte swizzle row of bf16");

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_tma_ws(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box BM x 64
                  const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
                  __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                  int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];  // Pipe::kSmemBytes <= smem_bytes
  Pipe pipe(smem_raw);
  pipe.init();

  int tile_m, tile_n;
  fk::grouped_raster(blockIdx.x, GROUP_M, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;  // this block's BM x BN tile of C
  const int k_tiles = K / BK;

  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0) pipe.produce(&tmA, &tmB, m0, n0, 0, k_tiles);
  } else {
    const int consumer = Pipe::become_consumer();
    Pipe::Acc acc;  // [Pipe::kMi m64 slices][Pipe::kCols/2 floats]: this consumer's part of the tile
    pipe.consume(acc, consumer, k_tiles);
    // Adjacent columns of a fragment row go out as one bf16x2.
    Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
      if (m0 + r < M)
        *reinterpret_cast<__nv_bfloat162*>(C + (size_t)(m0 + r) * N + n0 + c) = __floats2bfloat162_rn(v0, v1);
    });
  }
  pipe.finish();
}
