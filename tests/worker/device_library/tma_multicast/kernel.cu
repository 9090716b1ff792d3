/* forgek
{
  "name": "tma_multicast_fk",
  "archs": ["sm90"],
  "tensor_maps": [{"name": "tm", "tensor": "x", "box": ["32", "64"]}],
  "constraints": ["R % 64 == 0"],
  "launches": [
    {"kernel": "tma_multicast_fk", "grid": ["R / 32"], "block": [128], "cluster": [2, 1, 1], "args": ["tm", "y"]}
  ]
}
*/
// Cluster c (CTAs 2c, 2c+1) owns rows [64c, 64c+64): tile t = rows 64c+32t .. +32. CTA rank r loads
// tile r and multicasts it into buf[r] of both CTAs (rank 1 with an L2 cache hint), each CTA's
// barrier expecting both tiles; then CTA r writes out buf[1-r], the tile only its peer loaded.
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>

constexpr unsigned kTileBytes = 32 * 64 * 4;

extern "C" __global__ void __launch_bounds__(128)
tma_multicast_fk(const __grid_constant__ CUtensorMap tm, float* y)
{
  __shared__ __align__(128) float buf[2][32 * 64];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned rank = fk::cluster_ctarank();
  const int cluster = blockIdx.x / 2;
  if (threadIdx.x == 0) {
    fk::mbar_init(&bar, 1);
    fk::fence_barrier_init();
  }
  fk::cluster_sync();  // both CTAs' barriers are initialised before any multicast lands
  if (threadIdx.x == 0) {
    fk::mbar_arrive_expect_tx(&bar, 2 * kTileBytes);  // our tile and the peer's, both into us
    const int row = cluster * 64 + (int)rank * 32;
    if (rank == 0) fk::tma_load_2d_multicast(buf[rank], &tm, &bar, 0, row, 0x3);
    else fk::tma_load_2d_multicast_hint(buf[rank], &tm, &bar, 0, row, 0x3, fk::policy_evict_first());
  }
  fk::mbar_wait(&bar, 0);
  const int peer = 1 - (int)rank;
  const size_t base = ((size_t)cluster * 64 + peer * 32) * 64;
  for (int i = threadIdx.x; i < 32 * 64; i += 128) y[base + i] = buf[peer][i];
  fk::cluster_sync();  // no CTA exits while its peer's copies may still target it
}
