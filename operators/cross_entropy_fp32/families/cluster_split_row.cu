/* forgek
{
  "name": "cross_entropy_cluster_split_row",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "online_softmax", "vector_16B",
                 "warp_shuffle_reduction", "memory_level_parallelism"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "block_size": ["THREADS"],
               "memory_level_parallelism": ["BATCH"], "cache_hint": ["LOAD_HINT"]},
  "params": {"CLUSTER": [1, 2, 4], "THREADS": [512, 256], "BATCH": [8, 4], "LOAD_HINT": [1, 0]},
  "constraints": ["V % 4 == 0"],
  "launches": [
    {"kernel": "cross_entropy_cluster_split_row",
     "grid": ["CLUSTER*T"], "block": ["THREADS"], "cluster": ["CLUSTER"],
     "args": ["logits", "targets", "loss", "T", "V"]}
  ]
}
*/
// Fused cross-entropy with each token's row split across a thread-block cluster of CLUSTER CTAs,
// the partial log-sum-exp states merged through distributed shared memory: one read of the logits.
//
// The reference gives a whole 501 KiB row (V = 128256) to one CTA: 15.5 waves of long-lived CTAs,
// and each row ends in a scalar tail loop (1344 float4 one at a time: ~3 dependent DRAM round trips).
// Here every CTA streams a 1/CLUSTER slice, so work units are CLUSTER times shorter (a shorter
// last wave), and the slice ends in ONE masked batch instead of a loop:
//   token t     -> the cluster of CTAs blockIdx.x = t*CLUSTER ... t*CLUSTER + CLUSTER-1
//   CTA rank r  -> float4 [r*slice, min(V/4, (r+1)*slice)) of the row, slice = ceil(V/4 / CLUSTER)
//   thread i    -> float4 begin+i, begin+i+THREADS, ... in batches of BATCH (each warp load is 512
//                  contiguous bytes; BATCH*16 bytes per thread issued before any is used)
// Each thread keeps an online-softmax state (max m, sum of exp(x - m)), rescaled once per batch.
// States merge by warp butterflies, then across warps in shared memory; each CTA then stores its
// state into rank 0's shared memory (st.shared::cluster) and one cluster barrier publishes them;
// rank 0 merges the CLUSTER states in rank order and writes loss = m + log(s) - x[target].
// CLUSTER = 1 is the same kernel without the cluster exchange (the control for the cluster).
// Measured on the H200: CLUSTER 1 and 2 at parity or slightly ahead (1.005x), CLUSTER 8 0.85x and
// BATCH 16 0.60x-0.92x (registers cut occupancy) are left out.
// LOAD_HINT: 0 ld.global.cs (evict-first), 1 ld.global.nc.L1::no_allocate.
#include <forgek/cluster.cuh>
#include <forgek/softmax.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;

// Online-softmax state of a set of logits: their max and the sum of exp(x - max).
using LseState = fk::SoftmaxState;

// The 16-byte loads of the logits with the LOAD_HINT cache policy.
constexpr fk::LoadHint kLoad = LOAD_HINT == 0 ? fk::LoadHint::cs : fk::LoadHint::nc_na;

// Adds BATCH float4 (already loaded; masked slots hold -inf) to a thread's state. The exps use
// max 0 instead of -inf when nothing real was seen yet, so an all-masked batch adds exp(-inf) = 0
// rather than NaN.
__device__ __forceinline__ void absorb(LseState& st, const float4 (&v)[BATCH]) {
  float m = st.max;
#pragma unroll
  for (int k = 0; k < BATCH; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  const float ref = m == fk::neg_inf() ? 0.f : m;
  float s = st.sum * __expf(st.max - ref);  // 0 * exp(-inf) = 0 before the first real logit
#pragma unroll
  for (int k = 0; k < BATCH; ++k)
    s += __expf(v[k].x - ref) + __expf(v[k].y - ref) + __expf(v[k].z - ref) + __expf(v[k].w - ref);
  st = {m, s};
}

extern "C" __global__ void __launch_bounds__(THREADS)
cross_entropy_cluster_split_row(const float* __restrict__ logits,  // [T, V] row-major
                                const int* __restrict__ targets,   // [T], each in [0, V)
                                float* __restrict__ loss,          // [T]
                                int T, int V) {
  __shared__ LseState warp_state[kWarps];    // [THREADS/32] one state per warp of this CTA
  __shared__ LseState slice_state[CLUSTER];  // [CLUSTER] rank 0's copy: one state per CTA of the cluster

  const int rank = CLUSTER > 1 ? static_cast<int>(fk::cluster_ctarank()) : 0;
  const int t = blockIdx.x / CLUSTER;  // the grid is CLUSTER*T CTAs: every token is in range
  const float* row = logits + static_cast<size_t>(t) * V;
  const float4* row4 = reinterpret_cast<const float4*>(row);  // V % 4 == 0: rows stay 16-byte aligned
  const int vectors = V / 4;
  const int slice = (vectors + CLUSTER - 1) / CLUSTER;
  const int begin = min(vectors, rank * slice);
  const int end = min(vectors, begin + slice);

  LseState st{fk::neg_inf(), 0.f};
  // Full batches: every one of the BATCH float4 is inside the slice.
  int base = begin + static_cast<int>(threadIdx.x);
  for (; base + (BATCH - 1) * THREADS < end; base += THREADS * BATCH) {
    float4 v[BATCH];  // [BATCH] float4, all loads issued before the first use
#pragma unroll
    for (int k = 0; k < BATCH; ++k) v[k] = fk::load<kLoad>(row4 + base + k * THREADS);
    absorb(st, v);
  }
  // At most one partial batch remains (base + BATCH*THREADS > end): predicated loads, -inf padding.
  if (base < end) {
    const float inf = fk::neg_inf();
    float4 v[BATCH];
#pragma unroll
    for (int k = 0; k < BATCH; ++k)
      v[k] = base + k * THREADS < end ? fk::load<kLoad>(row4 + base + k * THREADS) : make_float4(inf, inf, inf, inf);
    absorb(st, v);
  }

  // CTA merge: warp butterflies, then warp 0 over the [kWarps] warp states.
  st = fk::warp_softmax_merge(st);
  if (threadIdx.x % kWarp == 0) warp_state[threadIdx.x / kWarp] = st;
  __syncthreads();
  if (threadIdx.x < kWarp) {
    st = threadIdx.x < kWarps ? warp_state[threadIdx.x] : LseState{fk::neg_inf(), 0.f};
    st = fk::warp_softmax_merge(st);
    if (threadIdx.x == 0) {
      if (CLUSTER > 1) {  // push this CTA's state into rank 0's slice_state[rank]
        const unsigned dst = fk::map_shared_rank(&slice_state[rank], 0);
        fk::st_shared_cluster_f32(dst, st.max);
        fk::st_shared_cluster_f32(dst + 4, st.sum);
      } else {
        slice_state[0] = st;
      }
    }
  }
  // Cluster exchange: the barrier (release/acquire) makes every pushed state visible to rank 0.
  // Ranks > 0 may exit right after it: nobody reads their shared memory.
  if (CLUSTER > 1) fk::cluster_sync();
  else __syncthreads();
  if (rank == 0 && threadIdx.x == 0) {
    LseState total = slice_state[0];
#pragma unroll
    for (int r = 1; r < CLUSTER; ++r) total = fk::softmax_merge(total, slice_state[r]);
    loss[t] = total.max + logf(total.sum) - row[targets[t]];
  }
}
