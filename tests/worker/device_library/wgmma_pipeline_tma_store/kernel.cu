/* forgek
{
  "name": "wgmma_pipeline_tma_store_test",
  "archs": ["sm90"],
  "params": {"BM": 64, "BN": 256, "STAGES": 2, "PANELS": [1, 2], "STSM": [0, 1]},
  "constraints": ["N % BN == 0", "K % 64 == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmC", "tensor": "C", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "wgmma_pipeline_tma_store_test", "grid": [1], "block": [384],
     "smem": "STAGES*(BM + BN)*128 + 1024 + STAGES*16 + 1024 + 2*PANELS*8192", "args": ["tmA", "tmB", "tmC", "M", "N", "K"]}
  ]
}
*/
// fk::WgmmaTmaStore behind fk::WgmmaPipeline (cooperative, bf16): one block walks every tile, each
// consumer stages its 64 x 128 part of a tile PANELS 64-column panels per round (by 4-byte stores, or
// by stmatrix with STSM) and TMA-stores it while it goes on with the next tile; the transform adds a term of the global row and column, so a wrong
// tile-relative coordinate shows.
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, 1, fk::WgmmaBf16>;
using Store = fk::WgmmaTmaStore<Pipe, PANELS, STSM != 0>;

extern "C" __global__ void __launch_bounds__(384, 1)
wgmma_pipeline_tma_store_test(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                              const __grid_constant__ CUtensorMap tmC, int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  Pipe pipe(smem_raw);
  pipe.init();
  const int tiles_m = (M + BM - 1) / BM, tiles = tiles_m * (N / BN);
  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0)
      for (int t = 0; t < tiles; ++t) pipe.produce(&tmA, &tmB, (t % tiles_m) * BM, (t / tiles_m) * BN, 0, K / 64);
  } else {
    const int consumer = Pipe::become_consumer();
    Store store(pipe, consumer);
    for (int t = 0; t < tiles; ++t) {
      const int m0 = (t % tiles_m) * BM, n0 = (t / tiles_m) * BN;
      Pipe::Acc acc;
      pipe.consume(acc, consumer, K / 64);
      store.store(
          acc, consumer,
          [&](int r, int c, float v0, float v1) {
            const float m = (float)((m0 + r) % 7);
            return __floats2bfloat162_rn(v0 + m - 0.25f * (float)((n0 + c) % 5), v1 + m - 0.25f * (float)((n0 + c + 1) % 5));
          },
          [&](const void* panel, int r, int c) { fk::tma_store_2d(&tmC, panel, n0 + c, m0 + r); });
    }
    store.drain();
  }
  pipe.finish();
}
