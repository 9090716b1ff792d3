/* forgek
{
  "name": "tma_store_fk",
  "archs": ["sm90"],
  "tensor_maps": [
    {"name": "tmY2", "tensor": "y2", "box": ["32", "64"]},
    {"name": "tmY3", "tensor": "y3", "shape": ["R / 32", "32", "64"], "box": ["1", "32", "64"]}
  ],
  "constraints": ["R % 32 == 0"],
  "launches": [
    {"kernel": "tma_store_fk", "grid": ["R / 32"], "block": [128], "args": ["x", "tmY2", "tmY3"]}
  ]
}
*/
// Block b computes rows [32b, 32b+32) into two shared tiles, fences them for the async proxy, and
// one thread stores them with tma_store_2d / tma_store_3d in two bulk groups: it waits for the
// first group's reads (bulk_wait_read<1>: at most the newest still pending), then for all writes.
#include <forgek/tma.cuh>

extern "C" __global__ void __launch_bounds__(128)
tma_store_fk(const float* x, const __grid_constant__ CUtensorMap tmY2, const __grid_constant__ CUtensorMap tmY3)
{
  __shared__ __align__(128) float s2[32 * 64];
  __shared__ __align__(128) float s3[32 * 64];
  const size_t base = (size_t)blockIdx.x * 32 * 64;
  for (int i = threadIdx.x; i < 32 * 64; i += 128) {
    const float v = x[base + i];
    s2[i] = v + 1.0f;
    s3[i] = 2.0f * v;
  }
  fk::fence_proxy_async_smem();  // every writer: its shared writes before the TMA engine reads them
  __syncthreads();
  if (threadIdx.x == 0) {
    fk::tma_store_2d(&tmY2, s2, 0, blockIdx.x * 32);
    fk::bulk_commit();
    fk::tma_store_3d(&tmY3, s3, 0, 0, blockIdx.x);
    fk::bulk_commit();
    fk::bulk_wait_read<1>();
    fk::bulk_wait<0>();  // the shared sources must outlive the copies
  }
}
