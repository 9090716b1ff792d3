/* forgek
{
  "name": "softmax_cluster_split_rows",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "online_softmax", "register_row_cache",
                 "warp_shuffle_reduction", "vector_16B", "streaming_store"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "vector_16B": ["VEC"], "register_row_cache": ["MAX_ITEMS"],
               "block_size": ["BLOCK"]},
  "params": {"CLUSTER": [2, 4, 8], "BLOCK": [128, 256, 512], "VEC": [1, 2, 4],
             "MAX_ITEMS": [1, 2, 4, 8, 16]},
  "let": {"row_capacity": "CLUSTER*BLOCK*VEC*MAX_ITEMS", "cached_floats_per_thread": "VEC*MAX_ITEMS"},
  "constraints": ["N % VEC == 0", "N <= row_capacity", "cached_floats_per_thread <= 64"],
  "launches": [
    {"kernel": "softmax_cluster_split_rows",
     "grid": ["CLUSTER*M"], "block": ["BLOCK"], "cluster": ["CLUSTER"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Softmax over the last axis of an fp32 [M, N] row-major matrix; each row is split across a
// thread-block cluster of CLUSTER CTAs (Hopper) and held in registers: one read of x, one write of y.
//   row r       -> the cluster of CTAs blockIdx.x = r*CLUSTER ... r*CLUSTER + CLUSTER-1
//   CTA rank k  -> packs [k*slice, min(npacks, (k+1)*slice)) of the row, slice = ceil(npacks/CLUSTER)
//   thread t    -> packs t, t+BLOCK, ... of the slice: [MAX_ITEMS] x [VEC] floats in registers
// Each CTA reduces its slice to an online-softmax state (max, sum of exp(x - max)) and publishes it
// in shared memory; after a cluster barrier every CTA reads all CLUSTER states through distributed
// shared memory and scales its slice. Small CTAs keep several rows in flight per SM, so the load
// phase of one row overlaps the reductions and stores of others.
#include <cooperative_groups.h>
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>
#include <forgek/vec.cuh>

namespace cg = cooperative_groups;

constexpr int kWarp = 32;
constexpr int kWarps = BLOCK / kWarp;

// VEC consecutive floats of a row, moved as one VEC*4-byte access.
using Pack = fk::FloatPack<VEC>;
// y is never read again by this kernel: streaming stores.
constexpr fk::StoreHint kStoreY = fk::StoreHint::cs;

// The online-softmax state of a set of values: their max and the sum of exp(value - max).
using RowStat = fk::SoftmaxState;

extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_cluster_split_rows(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ RowStat warp_stat[kWarps];
  __shared__ RowStat cta_stat;  // this CTA's slice state; peers read it through DSMEM

  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int row = blockIdx.x / CLUSTER;  // the grid is CLUSTER*M CTAs: every row is in range
  const int npacks = N / VEC;            // N % VEC == 0 (a manifest constraint) keeps packs aligned
  const int slice = (npacks + CLUSTER - 1) / CLUSTER;
  const int begin = rank * slice;
  const int end = min(npacks, begin + slice);
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;

  // Load the slice once; all MAX_ITEMS loads are issued before any is used.
  Pack cache[MAX_ITEMS];
  float m = fk::neg_inf();
#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    const int idx = begin + i * BLOCK + static_cast<int>(threadIdx.x);
#pragma unroll
    for (int j = 0; j < VEC; ++j) cache[i].v[j] = fk::neg_inf();
    if (idx < end) cache[i] = fk::load_floats<VEC>(xrow + idx * VEC);
#pragma unroll
    for (int j = 0; j < VEC; ++j) m = fmaxf(m, cache[i].v[j]);
  }

  // Thread-local online state: exponentiate against the thread's own max now (one exp per
  // element) and rescale by exp(thread max - row max) at the end, so the cluster exchanges
  // (max, sum) once instead of a max round followed by a sum round.
  RowStat s{m, 0.f};
#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    if (begin + i * BLOCK + static_cast<int>(threadIdx.x) < end) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        cache[i].v[j] = __expf(cache[i].v[j] - m);
        s.sum += cache[i].v[j];
      }
    }
  }

  // CTA reduction: warps by shuffles, then warp 0 over the [kWarps] warp states.
  s = fk::warp_softmax_merge(s);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (lane == 0) warp_stat[warp] = s;
  __syncthreads();
  if (warp == 0) {
    RowStat w = lane < kWarps ? warp_stat[lane] : RowStat{fk::neg_inf(), 0.f};
    w = fk::warp_softmax_merge(w);
    if (lane == 0) cta_stat = w;
  }

  // Cluster exchange. cluster.sync() (release/acquire) publishes every cta_stat. Each thread reads
  // the CLUSTER states in rank order (same-address loads broadcast within a warp), so all CTAs
  // compute the same row state bit for bit. The closing barrier is split: arrive once this CTA has
  // read its peers, wait just before exit, so a peer's shared memory outlives our reads while our
  // stores proceed.
  cluster.sync();
  RowStat row_stat = *cluster.map_shared_rank(&cta_stat, 0);
#pragma unroll
  for (int k = 1; k < CLUSTER; ++k) row_stat = fk::softmax_merge(row_stat, *cluster.map_shared_rank(&cta_stat, k));
  cluster.barrier_arrive();

  // y = exp(x - thread max) * exp(thread max - row max) / row sum.
  const float scale = __expf(m - row_stat.max) / row_stat.sum;
#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    const int idx = begin + i * BLOCK + static_cast<int>(threadIdx.x);
    if (idx < end) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) cache[i].v[j] *= scale;
      fk::store_floats<kStoreY>(yrow + idx * VEC, cache[i]);
    }
  }

  cluster.barrier_wait();
}
