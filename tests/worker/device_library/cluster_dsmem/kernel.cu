/* forgek
{
  "name": "cluster_dsmem_fk",
  "archs": ["sm90"],
  "constraints": ["R % 4 == 0"],
  "launches": [
    {"kernel": "cluster_dsmem_fk", "grid": ["R"], "block": [128], "cluster": [4, 1, 1],
     "args": ["x", "y", "z", "w", "ranks"]}
  ]
}
*/
// Clusters of 4 CTAs; CTA b (rank s) holds row b of x in shared memory. After a cluster barrier it
// reads the row of rank s+1 through distributed shared memory (scalar loads for columns 0-63, 16-byte
// loads for 64-127), stores its x[b,0] and its rank into rank s+1's inbox, and arrives on the
// mbarriers of ranks s+1 (release.cta) and s+2 (release.cluster), then waits for its own barrier's 2
// arrivals. A last cluster barrier publishes the inboxes.
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>

extern "C" __global__ void __launch_bounds__(128)
cluster_dsmem_fk(const float* x, float* y, float* z, int* w, int* ranks)
{
  __shared__ __align__(16) float row[128];
  __shared__ float inbox;
  __shared__ unsigned inbox_rank;
  __shared__ __align__(8) unsigned long long bar;
  const int t = threadIdx.x, b = blockIdx.x;
  const unsigned rank = fk::cluster_ctarank(), n = fk::cluster_nctarank();
  const unsigned next = (rank + 1) % n, next2 = (rank + 2) % n;

  fk::cluster_arrive_relaxed();  // every CTA of the cluster has started
  fk::cluster_wait();
  row[t] = x[(size_t)b * 128 + t];
  if (t == 0) {
    fk::mbar_init(&bar, 2);
    fk::fence_barrier_init();
  }
  fk::cluster_sync();  // rows and barriers are visible cluster-wide

  if (t == 0) {
    fk::st_shared_cluster_f32(fk::map_shared_rank(&inbox, next), row[0]);
    fk::st_shared_cluster_u32(fk::map_shared_rank(&inbox_rank, next), rank);
    fk::mbar_arrive_cluster(&bar, next);
    fk::mbar_arrive_cluster_release(&bar, next2);
  }
  const size_t out = (size_t)b * 128;
  if (t < 64) {
    y[out + t] = fk::ld_shared_cluster_f32(fk::map_shared_rank(&row[t], next));
  } else if (t < 80) {
    const int c = 64 + 4 * (t - 64);
    const float4 v = fk::ld_dsmem_f4(&row[c], next);
    y[out + c] = v.x, y[out + c + 1] = v.y, y[out + c + 2] = v.z, y[out + c + 3] = v.w;
  }
  fk::mbar_wait(&bar, 0);  // both peers have arrived
  fk::cluster_arrive();    // release: our remote stores; and we no longer read peers' shared memory
  fk::cluster_wait();
  if (t == 0) {
    z[b] = inbox;
    w[b] = (int)fk::ld_shared_cluster_u32(fk::map_shared_rank(&inbox_rank, rank));  // own CTA through the cluster window
    ranks[2 * b] = (int)rank;
    ranks[2 * b + 1] = (int)n;
  }
}
