/* forgek
{
  "name": "wgmma_pipeline_bf16_test",
  "archs": ["sm90"],
  "params": {"BM": 128, "BN": 128, "STAGES": 2, "CLUSTER_M": 2, "SCHEDULE": 0},
  "constraints": ["N % BN == 0", "K % 64 == 0", "ceil_div(M, BM) % CLUSTER_M == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "wgmma_pipeline_bf16_test", "grid": ["CLUSTER_M"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "STAGES*(BM + BN)*128 + 1024 + STAGES*16", "args": ["tmA", "tmB", "C", "M", "N", "K"]}
  ]
}
*/
// fk::WgmmaPipeline with bf16 operands in one persistent cluster: the cluster walks every pair of
// vertically adjacent tiles (one per block) of each tile column, so each block's ring turns over
// several tiles, under the schedule SCHEDULE (cooperative or ping-pong: then the consumers take turns
// and skip each other's tiles); the accumulators are written as fp32 through for_each_pair, before any
// rounding.
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, CLUSTER_M, fk::WgmmaBf16, SCHEDULE>;

extern "C" __global__ void __launch_bounds__(384, 1)
wgmma_pipeline_bf16_test(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                         float* __restrict__ C, int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  Pipe pipe(smem_raw);
  pipe.init();
  const int tiles_m = (M + BM - 1) / BM, units = tiles_m / CLUSTER_M * (N / BN);
  const int rank = (int)fk::cluster_ctarank();
  auto tile_of = [&](int u, int* m0, int* n0) {
    *m0 = ((u % (tiles_m / CLUSTER_M)) * CLUSTER_M + rank) * BM;
    *n0 = (u / (tiles_m / CLUSTER_M)) * BN;
  };
  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int u = 0; u < units; ++u) {
        int m0, n0;
        tile_of(u, &m0, &n0);
        pipe.produce(&tmA, &tmB, m0, n0, 0, K / 64);
      }
  } else {
    const int consumer = Pipe::become_consumer();
    for (int u = 0; u < units; ++u) {
      if (!Pipe::owns(consumer, u)) {
        pipe.skip(K / 64);
        continue;
      }
      int m0, n0;
      tile_of(u, &m0, &n0);
      Pipe::Acc acc;
      pipe.consume(acc, consumer, K / 64, u > 0, u + 1 < units);
      Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
        if (m0 + r < M) {
          C[(size_t)(m0 + r) * N + n0 + c] = v0;
          C[(size_t)(m0 + r) * N + n0 + c + 1] = v1;
        }
      });
    }
  }
  pipe.finish();
}
