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
    {"kernel": "tma_store_fk", "grid": ["R / 32"], "block": [128], "args": ["x", "tmY2", "tmY3", "y4"]}
  ]
}
*/
// Block b computes rows [32b, 32b+32) into three shared tiles, fences them for the async proxy, and
// one thread stores them: tma_store_2d / tma_store_3d in two bulk groups (it waits for the first
// group's reads, bulk_wait_read<1>: at most the newest still pending), then the third tile with
// linear bulk stores (bulk_store for rows 0-15, bulk_store_hint for rows 16-31), then all writes.
#include <forgek/tma.cuh>

extern "C" __global__ void __launch_bounds__(128)
tma_store_fk(const float* x, const __grid_constant__ CUtensorMap tmY2, const __grid_constant__ CUtensorMap tmY3,
             float* y4)
{
  __shared__ __align__(128) float s2[32 * 64];
  __shared__ __align__(128) float s3[32 * 64];
  __shared__ __align__(128) float s4[32 * 64];
  const size_t base = (size_t)blockIdx.x * 32 * 64;
  for (int i = threadIdx.x; i < 32 * 64; i += 128) {
    const float v = x[base + i];
    s2[i] = v + 1.0f;
    s3[i] = 2.0f * v;
    s4[i] = v - 1.0f;
  }
  fk::fence_proxy_async_smem();  // every writer: its shared writes before the TMA engine reads them
  __syncthreads();
  if (threadIdx.x == 0) {
    fk::tma_store_2d(&tmY2, s2, 0, blockIdx.x * 32);
    fk::bulk_commit();
    fk::tma_store_3d(&tmY3, s3, 0, 0, blockIdx.x);
    fk::bulk_commit();
    fk::bulk_wait_read<1>();
    constexpr unsigned kHalf = 16 * 64 * sizeof(float);  // 16 rows of 64 floats
    fk::bulk_store(y4 + base, s4, kHalf);
    fk::bulk_store_hint(y4 + base + 16 * 64, s4 + 16 * 64, kHalf, fk::policy_evict_first());
    fk::bulk_commit();
    fk::bulk_wait<0>();  // the shared sources must outlive the copies
  }
}
