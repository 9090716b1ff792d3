/* forgek
{
  "name": "gemm_bias_gelu_wgmma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast", "persistent_grid"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "tma_multicast": ["CLUSTER_M"],
               "raster": ["GROUP_M"], "gelu_form": ["GELU"], "persistent_grid": ["PERSISTENT"],
               "warp_specialization": ["SCHEDULE"], "tma_store": ["EPI"],
               "staging_writes": ["STSM"]},
  "params": {"BM": [64, 128, 256], "BN": [128, 256], "STAGES": [3, 4, 5, 6], "CLUSTER_M": [1, 2],
             "GROUP_M": [8, 16], "GELU": [0, 1, 2], "PERSISTENT": [0, 1], "SCHEDULE": [0, 1], "EPI": [0, 1, 2], "STSM": [0, 1]},
  "let": {"cons_cols": "BN / (1 + (1 - SCHEDULE)*(BM == 64))",
          "staging": "(EPI > 0)*(1024 + 2*EPI*8192)",
          "smem_bytes": "STAGES*(BM + BN)*128 + 1024 + STAGES*16 + staging",
          "tiles_m": "ceil_div(M, BM)",
          "units": "tiles_m / CLUSTER_M * (N / BN)",
          "ctas": "(PERSISTENT*min(units, num_sms / CLUSTER_M) + (1 - PERSISTENT)*units) * CLUSTER_M"},
  "constraints": ["BM * BN <= 128*256",
                  "SCHEDULE == 0 || (PERSISTENT == 1 && BM * BN <= 128*128)",
                  "smem_bytes <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "N % BN == 0", "K % 64 == 0",
                  "tiles_m % CLUSTER_M == 0",
                  "EPI == 0 || (cons_cols / 64) % EPI == 0", "EPI > 0 || STSM == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmC", "tensor": "C", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_bias_gelu_wgmma_ws",
     "grid": ["ctas"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "tmC", "bias", "C", "M", "N", "K"]}
  ]
}
*/
// Hopper GEMM with a fused bias + GELU epilogue: C[M,N] = gelu(A[M,K] · B[K,N] + bias[N]), bf16 in,
// fp32 accumulate and epilogue, bf16 out.
//
// The mainloop is fk::WgmmaPipeline (<forgek/wgmma_pipeline.cuh>): warpgroup 0 streams k-tiles of A
// ([BM][64 k], K-major) and B (BN/64 panels of [64 k][64 n], N-major) by TMA into a STAGES-deep ring;
// warpgroups 1 and 2 multiply with wgmma. With CLUSTER_M = 2 the two blocks of a cluster hold vertically
// adjacent tiles (a "unit") and multicast halves of their common B tile. Units are numbered in the
// grouped raster (fk::grouped_raster, GROUP_M tile-rows at a time, for L2 reuse).
//   PERSISTENT 0: one cluster per unit;
//              1: num_sms / CLUSTER_M clusters each walk units u, u + #clusters, ...; the producer runs
//                 ahead into the next tile while the consumers finish the last one.
//   SCHEDULE   0: cooperative, both consumers on each tile (BM >= 128: consumer c owns rows
//                 [c*BM/2, (c+1)*BM/2); BM = 64: columns [c*BN/2, (c+1)*BN/2));
//              1: ping-pong, consumer c takes the block's tiles j with j % 2 == c, whole (BM x BN <=
//                 128 x 128), the two alternating at the tensor cores so that one's epilogue runs under
//                 the other's mainloop.
//
// Epilogue, on the fp32 accumulators in registers: v = acc + bias[col], then the tanh GELU, rounded to
// bf16 once. GELU picks its arithmetic (<forgek/activation.cuh> for 1 and 2):
//   0: 0.5*v*(1 + tanhf(u)), u = sqrt(2/pi)*(v + 0.044715 v^3), the accurate tanhf;
//   1: v / (1 + exp(-2u)), the same function (0.5*(1 + tanh(u)) = sigmoid(2u)) with the fast __expf
//      and one division (fk::gelu_tanh_sigmoid);
//   2: 0.5v + 0.5v*tanh(u) with tanh.approx, one MUFU op per element (fk::gelu_tanh_approx; ~2^-11
//      relative error of tanh, under bf16's 2^-8 rounding of C).
// The epilogue runs while the tensor cores idle (cooperative schedule) or under the other consumer's
// mainloop (ping-pong): its arithmetic per element is what the GELU form changes.
// EPI picks how C leaves the consumers:
//   0: bf16x2 stores straight from the fragments;
//   n: fk::WgmmaTmaStore, n 64x64 panels per round staged (128B-swizzled) in shared memory and written
//      by TMA stores (rows past M clipped) that stay in flight while the consumer starts its next tile.
// STSM (EPI > 0): the staging written by stmatrix, four 8x8 matrices a warp instruction (1), or by
// 4-byte stores (0).
#include <cuda_bf16.h>
#include <forgek/activation.cuh>
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16, SCHEDULE>;
using Store = fk::WgmmaTmaStore<Pipe, (EPI > 0 ? EPI : 1), STSM != 0>;  // used when EPI > 0

__device__ __forceinline__ float gelu(float v)
{
#if GELU == 2
  return fk::gelu_tanh_approx(v);
#elif GELU == 1
  return fk::gelu_tanh_sigmoid(v);
#else
  const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
  return 0.5f * v * (1.0f + tanhf(u));
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_bias_gelu_wgmma_ws(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box BM x 64
                        const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
                        const __grid_constant__ CUtensorMap tmC,  // C [M, N], box 64 x 64
                        const __nv_bfloat16* __restrict__ bias,   // [N]
                        __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                        int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];  // Pipe::kSmemBytes (+ 1024 + Store::kSmemBytes, EPI > 0)
  Pipe pipe(smem_raw);
  pipe.init();

  const int tiles_m = (M + BM - 1) / BM, tiles_n = N / BN;
  const int units = tiles_m / CLUSTER_M * tiles_n;
  const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;
  const int rank = CLUSTER_M > 1 ? (int)fk::cluster_ctarank() : 0;
  const int k_tiles = K / 64;
  // Unit u -> this block's BM x BN tile of C, at (m0, n0).
  auto tile_of = [&](int u, int* m0, int* n0) {
    int tile_m, tile_n;
    fk::grouped_raster(u * CLUSTER_M + rank, GROUP_M, tiles_m, tiles_n, &tile_m, &tile_n);
    *m0 = tile_m * BM;
    *n0 = tile_n * BN;
  };

  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int u = first; u < units; u += stride) {
        int m0, n0;
        tile_of(u, &m0, &n0);
        pipe.produce(&tmA, &tmB, m0, n0, 0, k_tiles);
      }
  } else {
    const int consumer = Pipe::become_consumer();
    for (int u = first, j = 0; u < units; u += stride, ++j) {
      if (!Pipe::owns(consumer, j)) {
        pipe.skip(k_tiles);
        continue;
      }
      int m0, n0;
      tile_of(u, &m0, &n0);
      Pipe::Acc acc;  // [Pipe::kMi m64 slices][Pipe::kCols/2 floats]: this consumer's part of the tile
      pipe.consume(acc, consumer, k_tiles, j > 0, u + stride < units);
      if (EPI > 0) {
        Store(pipe, consumer).store(
            acc, consumer,
            [&](int, int c, float v0, float v1) {
              const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(bias + n0 + c));
              return __floats2bfloat162_rn(gelu(v0 + b.x), gelu(v1 + b.y));
            },
            [&](const void* panel, int r, int c) { fk::tma_store_2d(&tmC, panel, n0 + c, m0 + r); });
        continue;
      }
      Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
        const int row = m0 + r, col = n0 + c;
        if (row >= M) return;  // TMA zero-filled the rows past M; they are not stored
        const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(bias + col));
        *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
            __floats2bfloat162_rn(gelu(v0 + b.x), gelu(v1 + b.y));
      });
    }
    if (EPI > 0) Store(pipe, consumer).drain();
  }
  pipe.finish();
}
