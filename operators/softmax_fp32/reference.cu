/* forgek
{
  "name": "softmax_warp_rows_or_cluster_row",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "online_softmax",
                 "streaming_store"],
  "params": {"WARP_ROWS": 8, "WARP_ITEMS": 8, "CTA_ITEMS": 8},
  "let": {
    "warp_path": "N <= 32*4*WARP_ITEMS",
    "cluster_ctas": "warp_path + (1 - warp_path)*ceil_div(N, 1024*4*CTA_ITEMS)",
    "slice_vectors": "ceil_div(ceil_div(N, 4), cluster_ctas)",
    "cta_threads": "32*ceil_div(ceil_div(slice_vectors, CTA_ITEMS), 32)",
    "threads": "warp_path*32*WARP_ROWS + (1 - warp_path)*cta_threads",
    "ctas": "warp_path*ceil_div(M, WARP_ROWS) + (1 - warp_path)*M*cluster_ctas"
  },
  "constraints": ["N % 4 == 0", "cluster_ctas <= 8"],
  "launches": [
    {"kernel": "softmax_fp32_reference",
     "grid": ["ctas"], "block": ["threads"], "cluster": ["cluster_ctas"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Expert softmax over the last axis of an fp32 [M, N] row-major matrix: y = exp(x - max) / sum.
//
// Both paths read every element of x once from DRAM and write every element of y once
// (8 bytes per element, the bandwidth floor); the row lives in registers in between.
//   N <= 32*4*WARP_ITEMS  one warp per row, WARP_ROWS rows per CTA; max and sum by warp shuffles.
//   larger N              one CTA per row, each thread holding up to CTA_ITEMS float4; rows longer
//                         than 1024*4*CTA_ITEMS floats are cut into cluster_ctas contiguous slices,
//                         one per CTA of a thread-block cluster. Each CTA reduces its slice to an
//                         online-softmax pair (max, sum of exp(x - max)); the pairs meet through
//                         distributed shared memory; each CTA then scales its slice.
// The CTA is sized so that every thread holds (about) CTA_ITEMS float4: the fewer threads a row
// needs, the more rows share an SM and overlap one row's loads with another's reductions and
// stores. Measured on H200 at 4096x32768: one 1024-thread CTA per row beat splitting the row over
// 2-4 smaller CTAs of a cluster (0.267 ms vs 0.288-0.313 ms): the cluster barrier and co-scheduling
// cost more than the extra overlap gains, so clusters are used only where registers run out.
// The path is chosen by N, uniformly for the whole grid; the manifest sizes the launch to match.
#include <cooperative_groups.h>
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>

namespace cg = cooperative_groups;

constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;

// The online-softmax state of a set of values: their max and the sum of exp(value - max).
using RowStat = fk::SoftmaxState;

__device__ __forceinline__ float4 exp4_minus(float4 v, float m) {
  return {__expf(v.x - m), __expf(v.y - m), __expf(v.z - m), __expf(v.w - m)};
}

__device__ __forceinline__ float4 scale4(float4 v, float s) { return {v.x * s, v.y * s, v.z * s, v.w * s}; }

// ---- N <= 32*4*WARP_ITEMS: one warp per row ---------------------------------------------------
// Lane l holds float4 vectors l, l+32, ..., l+32*(WARP_ITEMS-1) of its row: each warp-wide load
// is 512 contiguous bytes. Vectors past the row end stay empty (-inf for the max, skipped after).
__device__ __forceinline__ void softmax_warp_row(const float* __restrict__ x, float* __restrict__ y,
                                                 int M, int N) {
  const int lane = threadIdx.x % kWarp;
  const int row = blockIdx.x * WARP_ROWS + threadIdx.x / kWarp;
  if (row >= M) return;  // whole warps leave together; no CTA-wide barrier follows
  const int nvec = N / 4;
  const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * N);
  float4* yrow = reinterpret_cast<float4*>(y + static_cast<size_t>(row) * N);

  float4 v[WARP_ITEMS];  // [WARP_ITEMS] float4 of this lane's share of the row
  float m = fk::neg_inf();
#pragma unroll
  for (int i = 0; i < WARP_ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    v[i] = idx < nvec ? xrow[idx] : make_float4(fk::neg_inf(), fk::neg_inf(), fk::neg_inf(), fk::neg_inf());
    m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
  }
  m = fk::warp_max(m);

  // One exp per element: exp(x - row max) replaces x in place and feeds the sum.
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < WARP_ITEMS; ++i) {
    if (i * kWarp + lane < nvec) {
      v[i] = exp4_minus(v[i], m);
      sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }
  sum = fk::warp_sum(sum);

  const float inv_sum = 1.f / sum;
#pragma unroll
  for (int i = 0; i < WARP_ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    // y is never read again by this kernel: streaming stores keep it from displacing x in L2.
    if (idx < nvec) __stcs(&yrow[idx], scale4(v[i], inv_sum));
  }
}

// ---- larger N: one CTA, or one cluster of CTAs, per row --------------------------------------
// Row r is handled by the cluster of CTAs blockIdx.x = r*C .. r*C + C - 1 (C = cluster size, 1 for
// rows that fit one CTA). CTA of rank k owns float4 vectors [k*slice, min(nvec, (k+1)*slice)),
// slice = ceil(nvec / C); thread t holds vectors t, t+T, ... of that slice (T = blockDim.x): up to
// [CTA_ITEMS] float4 in registers. The manifest launches T >= slice / CTA_ITEMS threads.
__device__ __forceinline__ void softmax_cluster_row(const float* __restrict__ x, float* __restrict__ y,
                                                    int N) {
  __shared__ RowStat warp_stat[kMaxThreads / kWarp];
  __shared__ RowStat cta_stat;  // read by every CTA of the cluster through DSMEM

  cg::cluster_group cluster = cg::this_cluster();
  const int ctas = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int row = blockIdx.x / ctas;
  const int threads = static_cast<int>(blockDim.x), tid = static_cast<int>(threadIdx.x);
  const int nvec = N / 4;
  const int slice = (nvec + ctas - 1) / ctas;
  const int begin = rank * slice;
  const int end = min(nvec, begin + slice);
  const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * N);
  float4* yrow = reinterpret_cast<float4*>(y + static_cast<size_t>(row) * N);

  // Load the slice once; all CTA_ITEMS loads are issued before any is used.
  float4 v[CTA_ITEMS];
  float m = fk::neg_inf();
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    const int idx = begin + i * threads + tid;
    v[i] = idx < end ? xrow[idx] : make_float4(fk::neg_inf(), fk::neg_inf(), fk::neg_inf(), fk::neg_inf());
    m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
  }

  // Thread-local online state: exponentiate against the thread's own max now (one exp per
  // element), rescale by exp(thread max - row max) at the end. The CTA (and the cluster) then
  // reduce (max, sum) in one round instead of a max round followed by a sum round.
  RowStat s{m, 0.f};
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    if (begin + i * threads + tid < end) {
      v[i] = exp4_minus(v[i], m);
      s.sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }

  // CTA reduction: warps by shuffles, then warp 0 over the [threads/32] warp states.
  s = fk::warp_softmax_merge(s);
  const int warp = tid / kWarp, lane = tid % kWarp;
  if (lane == 0) warp_stat[warp] = s;
  __syncthreads();
  if (warp == 0) {
    RowStat w = lane < threads / kWarp ? warp_stat[lane] : RowStat{fk::neg_inf(), 0.f};
    w = fk::warp_softmax_merge(w);
    if (lane == 0) cta_stat = w;
  }

  // Cluster exchange. The first barrier (release/acquire) publishes every cta_stat; each thread
  // then reads the C states in rank order, so all CTAs compute the same row state bit for bit.
  // The second barrier is split: arrive once this CTA has read its peers, wait only before
  // exiting, so a peer's shared memory outlives our reads while the stores go ahead.
  RowStat row_stat;
  if (ctas > 1) {
    cluster.sync();
    row_stat = *cluster.map_shared_rank(&cta_stat, 0);
    for (int k = 1; k < ctas; ++k) row_stat = fk::softmax_merge(row_stat, *cluster.map_shared_rank(&cta_stat, k));
    cluster.barrier_arrive();
  } else {
    __syncthreads();
    row_stat = cta_stat;
  }

  // y = exp(x - thread max) * exp(thread max - row max) / row sum.
  const float scale = __expf(m - row_stat.max) / row_stat.sum;
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    const int idx = begin + i * threads + tid;
    if (idx < end) __stcs(&yrow[idx], scale4(v[i], scale));
  }

  if (ctas > 1) cluster.barrier_wait();
}

extern "C" __global__ void __launch_bounds__(kMaxThreads)
softmax_fp32_reference(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  if (N <= kWarp * 4 * WARP_ITEMS)
    softmax_warp_row(x, y, M, N);
  else
    softmax_cluster_row(x, y, N);
}
