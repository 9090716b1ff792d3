/* forgek
{
  "name": "tma_load_fk",
  "archs": ["sm90"],
  "tensor_maps": [
    {"name": "tm2", "tensor": "x", "box": ["32", "64"]},
    {"name": "tm3", "tensor": "x", "shape": ["R / 32", "32", "64"], "box": ["1", "32", "64"]}
  ],
  "constraints": ["R % 32 == 0"],
  "launches": [
    {"kernel": "tma_load_fk", "grid": ["R / 32"], "block": [128], "args": ["tm2", "tm3", "y2", "y3", "y4"]}
  ]
}
*/
// Block b moves rows [32b, 32b+32) of x three times through shared memory, on one mbarrier:
//   phase 0: tm2's box (0, 32b) by tma_load_2d, armed with mbar_arrive_expect_tx, waited with mbar_wait;
//   phase 1: tm3's box (0, 0, b) by tma_load_3d and tm2's box again by tma_load_2d_hint (evict_first),
//            armed with mbar_expect_tx + mbar_arrive, waited with an mbar_try_wait loop.
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>

constexpr unsigned kTileBytes = 32 * 64 * 4;

extern "C" __global__ void __launch_bounds__(128)
tma_load_fk(const __grid_constant__ CUtensorMap tm2, const __grid_constant__ CUtensorMap tm3, float* y2, float* y3,
            float* y4)
{
  __shared__ __align__(128) float buf2[32 * 64];
  __shared__ __align__(128) float buf3[32 * 64];
  __shared__ __align__(128) float buf4[32 * 64];
  __shared__ __align__(8) unsigned long long bar;
  const int tid = threadIdx.x;
  if (tid == 0) {
    fk::prefetch_tensormap(&tm2);
    fk::prefetch_tensormap(&tm3);
    fk::mbar_init(&bar, 1);
    fk::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    fk::mbar_arrive_expect_tx(&bar, kTileBytes);
    fk::tma_load_2d(buf2, &tm2, &bar, 0, blockIdx.x * 32);
  }
  fk::mbar_wait(&bar, 0);
  __syncthreads();  // nobody still waits on phase 0 when phase 1 starts
  if (tid == 0) {
    fk::mbar_expect_tx(&bar, 2 * kTileBytes);
    fk::tma_load_3d(buf3, &tm3, &bar, 0, 0, blockIdx.x);
    fk::tma_load_2d_hint(buf4, &tm2, &bar, 0, blockIdx.x * 32, fk::policy_evict_first());
    fk::mbar_arrive(&bar);
  }
  while (!fk::mbar_try_wait(&bar, 1)) {
  }
  const size_t base = (size_t)blockIdx.x * 32 * 64;
  for (int i = tid; i < 32 * 64; i += 128) {
    y2[base + i] = buf2[i];
    y3[base + i] = buf3[i];
    y4[base + i] = buf4[i];
  }
}
