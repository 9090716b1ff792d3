/* forgek
{
  "name": "wgmma_pipeline_e4m3_test",
  "archs": ["sm90"],
  "params": {"BM": 64, "BN": 256, "STAGES": 2, "PROMOTE": 2},
  "constraints": ["N % BN == 0", "K % (128*PROMOTE) == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "128"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["64", "128"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "wgmma_pipeline_e4m3_test", "grid": ["ceil_div(M, BM)", "N / BN"], "block": [384],
     "smem": "STAGES*(BM + BN)*128 + 1024 + STAGES*16", "args": ["tmA", "tmB", "C", "M", "N", "K"]}
  ]
}
*/
// fk::WgmmaPipeline with e4m3 operands (fk::wgmma_m64k32_e4m3 on two K-major descriptors), one tile
// per block, the promoted consumer loop; the accumulators are written as fp32 through for_each_pair.
#include <forgek/wgmma_pipeline.cuh>

using Pipe = fk::WgmmaPipeline<BM, BN, STAGES, 1, fk::WgmmaE4m3>;

extern "C" __global__ void __launch_bounds__(384, 1)
wgmma_pipeline_e4m3_test(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                         float* __restrict__ C, int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  Pipe pipe(smem_raw);
  pipe.init();
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  if (Pipe::producer_warpgroup()) {
    Pipe::become_producer();
    if (threadIdx.x == 0) pipe.produce(&tmA, &tmB, m0, n0, 0, K / 128);
  } else {
    const int consumer = Pipe::become_consumer();
    Pipe::Acc acc, part;
    pipe.consume_promoted<PROMOTE>(acc, part, consumer, K / 128);
    Pipe::for_each_pair(acc, consumer, [&](int r, int c, float v0, float v1) {
      if (m0 + r < M) {
        C[(size_t)(m0 + r) * N + n0 + c] = v0;
        C[(size_t)(m0 + r) * N + n0 + c + 1] = v1;
      }
    });
  }
  pipe.finish();
}
