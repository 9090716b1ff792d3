/* forgek
{
  "name": "argmax_rows_cluster_split_row",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "vector_16B", "warp_shuffle_reduction",
                 "memory_level_parallelism"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "block_size": ["THREADS"],
               "memory_level_parallelism": ["UNROLL"], "cache_hint": ["LOAD_HINT"]},
  "params": {"CLUSTER": [2, 4, 8, 1], "THREADS": [128, 256, 512], "UNROLL": [8, 4, 2], "LOAD_HINT": [1, 0]},
  "constraints": ["N % 8 == 0"],
  "launches": [
    {"kernel": "argmax_rows_cluster_split_row",
     "grid": ["CLUSTER*M"], "block": ["THREADS"], "cluster": ["CLUSTER"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Argmax of each row of a bf16 [M, N] matrix, first occurrence on ties, with each row split
// across a thread-block cluster of CLUSTER CTAs whose partial (max, column) pairs merge through
// distributed shared memory. Unlike one CTA per row, the unit of work is 1/CLUSTER of a row: a
// few rows (decode batches) still spread over CLUSTER SMs each, and with many rows the last wave
// is CLUSTER times shorter.
//
//   row r       -> the cluster of CTAs CLUSTER*r .. CLUSTER*r + CLUSTER-1 (grid = CLUSTER*M)
//   CTA rank c  -> 16-byte vectors [c*slice, min(N/8, (c+1)*slice)) of the row,
//                  slice = ceil(N/8 / CLUSTER): columns grow with the rank
//   thread t    -> vectors begin+t, begin+t+THREADS, ... UNROLL loaded before any is used, then
//                  one masked batch ends the slice (no tail loop)
//   in thread   -> each vector folds as three packed bf16x2 maxima (__hmax2); a strict '>' keeps
//                  the first vector holding the thread's max (columns grow along the walk), and
//                  the first of its 8 values equal to the max is found once, at the end
//   CTA         -> fk::warp_argmax per warp (ties to the lower column), warp 0 over the warps
//   cluster     -> thread 0 of each CTA stores its pair into rank 0's slot [c]
//                  (st.shared::cluster); one cluster barrier publishes them; rank 0 merges the
//                  CLUSTER pairs with the same tie rule and writes y[r]
// CLUSTER = 1 is the same kernel without the exchange (the control for the cluster).
// LOAD_HINT: 1 ld.global.nc.L1::no_allocate (x is read once), 0 ld.global.cs (evict-first).
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;

// x is read once: LOAD_HINT 1 nc no-allocate, 0 evict-first.
constexpr fk::LoadHint kLoadX = LOAD_HINT == 0 ? fk::LoadHint::cs : fk::LoadHint::nc_na;

__device__ __forceinline__ float vec_max(const uint4& v) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
  const __nv_bfloat162 m = __hmax2(__hmax2(h[0], h[1]), __hmax2(h[2], h[3]));
  const float2 f = __bfloat1622float2(m);
  return fmaxf(f.x, f.y);
}

extern "C" __global__ void __launch_bounds__(THREADS)
argmax_rows_cluster_split_row(const __nv_bfloat16* __restrict__ x,  // [M, N] row-major, N % 8 == 0
                              int* __restrict__ y,                  // [M] column of the first maximum
                              int M, int N) {
  __shared__ float warp_best[kWarps];    // [THREADS/32] one (value, column) per warp of this CTA
  __shared__ int warp_col[kWarps];
  __shared__ float part_best[CLUSTER];   // [CLUSTER] rank 0's copy: one (value, column) per CTA
  __shared__ int part_col[CLUSTER];

  const int rank = CLUSTER > 1 ? static_cast<int>(fk::cluster_ctarank()) : 0;
  const int row = blockIdx.x / CLUSTER;  // grid = CLUSTER*M: every row is in range
  const int tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp;
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);  // [nvec]
  const int nvec = N / 8;
  const int slice = (nvec + CLUSTER - 1) / CLUSTER;
  const int begin = min(nvec, rank * slice);
  const int end = min(nvec, begin + slice);
  // Announce that this CTA runs (no memory order); waited for before the first remote store, so
  // that no CTA writes into a peer that has not started.
  if (CLUSTER > 1) fk::cluster_arrive_relaxed();

  float best = fk::neg_inf();  // the thread's max so far
  int best_vec = -1;           // the first vector holding it (-1: none beat -inf)
  uint4 held = make_uint4(0u, 0u, 0u, 0u);
  int q = begin + tid;
  for (; q + (UNROLL - 1) * THREADS < end; q += UNROLL * THREADS) {
    uint4 v[UNROLL];  // [UNROLL] vectors q, q + THREADS, ...
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = fk::load<kLoadX>(xrow + q + u * THREADS);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const float m = vec_max(v[u]);
      if (m > best) best = m, best_vec = q + u * THREADS, held = v[u];
    }
  }
  if (q < end) {  // one partial batch: predicated loads and folds
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      v[u] = q + u * THREADS < end ? fk::load<kLoadX>(xrow + q + u * THREADS) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const float m = vec_max(v[u]);
      if (q + u * THREADS < end && m > best) best = m, best_vec = q + u * THREADS, held = v[u];
    }
  }

  // This thread's (value, column).
  float v = best;
  int j = N;  // no vector: loses every tie against a real column
  if (best_vec >= 0) {
    float f[8];
    fk::unpack_bf16x8(held, f);
    int k = 7;
#pragma unroll
    for (int i = 7; i >= 0; --i)
      if (f[i] == v) k = i;  // the lowest i equal to the max
    j = 8 * best_vec + k;
  } else if (begin + tid < end) {
    j = 8 * (begin + tid);  // every value was -inf: the first one of the walk
  }

  fk::warp_argmax(v, j);
  if (lane == 0) warp_best[warp] = v, warp_col[warp] = j;
  if (CLUSTER > 1) fk::cluster_wait();  // every CTA of the cluster has started
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_best[lane] : fk::neg_inf();
    j = lane < kWarps ? warp_col[lane] : N;
    fk::warp_argmax(v, j);
    if (lane == 0) {
      if (CLUSTER > 1) {  // into rank 0's slot [rank]
        fk::st_shared_cluster_f32(fk::map_shared_rank(&part_best[rank], 0), v);
        fk::st_shared_cluster_u32(fk::map_shared_rank(&part_col[rank], 0), static_cast<unsigned>(j));
      } else {
        part_best[0] = v, part_col[0] = j;
      }
    }
  }
  // The barrier (release / acquire) makes every slot visible to rank 0. Ranks > 0 may exit after
  // it: nobody reads their shared memory.
  if (CLUSTER > 1) fk::cluster_sync();
  else __syncthreads();
  if (rank == 0 && tid == 0) {
    v = part_best[0], j = part_col[0];
#pragma unroll
    for (int c = 1; c < CLUSTER; ++c)
      if (fk::argmax_before(part_best[c], part_col[c], v, j)) v = part_best[c], j = part_col[c];
    y[row] = j;
  }
}
