/* forgek
{
  "name": "softmax_by_row_length",
  "mechanisms": ["tma", "mbarrier_pipeline", "persistent_grid", "memory_level_parallelism",
                 "smem_row_cache", "warp_shuffle_reduction", "streaming_store", "vector_16B",
                 "register_row_cache", "thread_block_cluster", "cluster_dsmem", "online_softmax"],
  "controls": {"mbarrier_pipeline": ["STAGES"], "persistent_grid": ["CTAS_PER_SM"],
               "memory_level_parallelism": ["WARPS"], "register_row_cache": ["WARP_ROWS", "WARP_ITEMS"],
               "streaming_store": ["STORE"], "path": ["SHORT_PATH"]},
  "params": {"SHORT_PATH": [0, 1], "WARP_ROWS": [2, 4, 8, 16], "WARP_ITEMS": [4, 8],
             "WARPS": [2, 4, 6, 8, 12, 16], "STAGES": [2, 3, 4, 6], "CTAS_PER_SM": [1, 2, 4],
             "EVICT_FIRST": [0], "CTA_ITEMS": [8], "MIN_THREADS": [128],
             "LOAD": [0], "STORE": [0, 1]},
  "let": {
    "warp": "SHORT_PATH == 1 && N <= 32*4*WARP_ITEMS",
    "bulk_smem": "WARPS*STAGES*(N*4 + 8)",
    "bulk": "SHORT_PATH == 0 && bulk_smem <= 231424",
    "cluster": "1 - warp - bulk",
    "resident": "max(1, min(CTAS_PER_SM, 233472 / (bulk_smem + 1024), 64 / WARPS))",
    "cluster_ctas": "1 - cluster + cluster*ceil_div(N, 1024*4*CTA_ITEMS)",
    "slice_vectors": "ceil_div(ceil_div(N, 4), cluster_ctas)",
    "cta_threads": "min(1024, max(MIN_THREADS, 32*ceil_div(ceil_div(slice_vectors, CTA_ITEMS), 32)))"
  },
  "constraints": ["N % 4 == 0", "cluster_ctas <= 8"],
  "launches": [
    {"kernel": "softmax_rows_warp", "when": "warp",
     "grid": ["ceil_div(M, WARP_ROWS)"], "block": ["32*WARP_ROWS"], "args": ["x", "y", "M", "N"]},
    {"kernel": "softmax_rows_bulk", "when": "bulk",
     "grid": ["min(ceil_div(M, WARPS), num_sms*resident)"], "block": ["32*WARPS"], "smem": "bulk_smem",
     "args": ["x", "y", "M", "N"]},
    {"kernel": "softmax_rows_cta", "when": "cluster && cta_threads <= 256",
     "grid": ["M*cluster_ctas"], "block": ["cta_threads"], "cluster": ["cluster_ctas"], "args": ["x", "y", "N"]},
    {"kernel": "softmax_rows_cta_long", "when": "cluster && cta_threads > 256",
     "grid": ["M*cluster_ctas"], "block": ["cta_threads"], "cluster": ["cluster_ctas"], "args": ["x", "y", "N"]}
  ]
}
*/
// Softmax over the last axis of an fp32 [M, N] row-major matrix: y = exp(x - max) / sum.
// Three paths, chosen per shape by the manifest (each path is its own kernel, launched `when` its
// row lengths come up), uniformly for the whole grid:
//
// Warp path (SHORT_PATH = 1, N <= 128*WARP_ITEMS): one warp per row, WARP_ROWS rows per CTA; each
//   lane holds [WARP_ITEMS] float4 of its row in registers; max and sum by warp shuffles.
//
// Bulk path (SHORT_PATH = 0, rows short enough that each warp can keep STAGES rows in shared memory):
//   persistent grid (num_sms SMs x `resident` CTAs); warp g of the grid owns rows g, g + G, g + 2G, ...
//   (G = warps in the grid) and a private ring of STAGES row slots in shared memory:
//     ring[warp]: [STAGES][N] fp32, one mbarrier per slot
//   lane 0 fills a slot with one bulk asynchronous copy (cp.async.bulk, the TMA engine's linear
//   mode) that completes on the slot's mbarrier; the warp works on slot s while the copies of the
//   next STAGES - 1 rows are in flight, so each SM keeps WARPS x STAGES rows of loads outstanding
//   with one instruction per row instead of N/128 per-lane vector loads.
//   Per row, from shared memory: pass 1 the max (fmax only), pass 2 e = exp(x - max) written back
//   in place and summed (one exp per element), pass 3 y = e / sum stored to global memory with
//   16-byte stores (streaming or write-back: STORE); lane 0 then refills the slot with the row STAGES turns ahead.
//
// Cluster path (every other row length, e.g. N = 32768, whose slots would not fit): the row lives
//   in registers, one CTA per row, or a cluster of cluster_ctas CTAs per row when one CTA's
//   registers cannot hold it (at most [CTA_ITEMS] float4 per thread, at least MIN_THREADS threads
//   per CTA: fewer items per thread for mid-length rows); CTA states (max, sum) meet through
//   distributed shared memory.
// Every path reads each element of x once from DRAM and writes each element of y once.
// The warp and cluster paths are the expert reference's design (reference.cu) with its tile
// sizes opened up as params; the bulk path is this family's own.
#include <cooperative_groups.h>
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/vec.cuh>

namespace cg = cooperative_groups;

constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;

// One contiguous global -> shared copy by the TMA engine, completing `bytes` on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                          unsigned long long policy) {
  if (EVICT_FIRST) fk::bulk_load_hint(dst, src, bytes, bar, policy);
  else fk::bulk_load(dst, src, bytes, bar);
}

// x is read exactly once: evict-first keeps it from pushing y's write-back lines out of L2.
__device__ __forceinline__ unsigned long long evict_first_policy() {
  return EVICT_FIRST ? fk::policy_evict_first() : 0ull;
}

__device__ __forceinline__ float max4(float4 v) { return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)); }

__device__ __forceinline__ float4 exp4_minus(float4 v, float m) {
  return {__expf(v.x - m), __expf(v.y - m), __expf(v.z - m), __expf(v.w - m)};
}

__device__ __forceinline__ float4 scale4(float4 v, float s) { return {v.x * s, v.y * s, v.z * s, v.w * s}; }

// x is read once (warp and cluster paths). LOAD 0: plain loads (the compiler's read-only path, as
// the reference); LOAD 1: ld.global.cs, evict-first in L2 (x's lines go before y's dirty ones);
// LOAD 2: ld.global.nc.L1::no_allocate with a 256-byte L2 prefetch.
constexpr fk::LoadHint kLoadX = LOAD == 1   ? fk::LoadHint::cs
                                : LOAD == 2 ? fk::LoadHint::nc_na_l2_256
                                            : fk::LoadHint::plain;

// y is written once and never read back by this kernel. STORE 0: streaming stores (st.global.cs,
// evict-first in L2, as the reference does); STORE 1: plain write-back stores, at normal L2
// priority (they may displace the dirty lines a cold-L2 flush leaves behind instead of each other).
constexpr fk::StoreHint kStoreY = STORE == 0 ? fk::StoreHint::cs : fk::StoreHint::plain;

// ---- bulk path --------------------------------------------------------------------------------
// Dynamic shared memory: [WARPS][STAGES][N] fp32 row slots, then [WARPS][STAGES] mbarriers.
__device__ __forceinline__ void softmax_bulk_rows(const float* __restrict__ x, float* __restrict__ y, int M,
                                                  int N) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const unsigned row_bytes = static_cast<unsigned>(N) * 4u;  // multiple of 16 (N % 4 == 0)
  const int nvec = N / 4;
  float* ring = reinterpret_cast<float*>(smem) + static_cast<size_t>(warp) * STAGES * N;  // [STAGES][N]
  unsigned long long* full =
      reinterpret_cast<unsigned long long*>(smem + static_cast<size_t>(WARPS) * STAGES * row_bytes) +
      warp * STAGES;  // [STAGES]

  const int first = blockIdx.x * WARPS + warp;
  const int stride = gridDim.x * WARPS;
  const unsigned long long policy = evict_first_policy();

  if (lane == 0) {
    for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[s], 1);
    // Make the initialised barriers visible to the TMA engine (the async proxy).
    fk::fence_proxy_async_smem();
    for (int s = 0; s < STAGES; ++s) {
      const int row = first + s * stride;
      if (row >= M) break;
      fk::mbar_arrive_expect_tx(&full[s], row_bytes);
      bulk_load(ring + static_cast<size_t>(s) * N, x + static_cast<size_t>(row) * N, row_bytes, &full[s], policy);
    }
  }
  __syncwarp();

  int slot = 0;
  unsigned phase = 0;
  for (int row = first; row < M; row += stride) {
    fk::mbar_wait(&full[slot], phase);
    float4* v = reinterpret_cast<float4*>(ring + static_cast<size_t>(slot) * N);  // [N/4] float4

    float m = fk::neg_inf();
    for (int i = lane; i < nvec; i += kWarp) m = fmaxf(m, max4(v[i]));
    m = fk::warp_max(m);

    float sum = 0.f;
    for (int i = lane; i < nvec; i += kWarp) {
      const float4 e = exp4_minus(v[i], m);
      v[i] = e;  // each lane rewrites only the vectors it reads in pass 3: no barrier needed
      sum += (e.x + e.y) + (e.z + e.w);
    }
    const float inv_sum = 1.f / fk::warp_sum(sum);

    float4* yrow = reinterpret_cast<float4*>(y + static_cast<size_t>(row) * N);
    for (int i = lane; i < nvec; i += kWarp) fk::store<kStoreY>(&yrow[i], scale4(v[i], inv_sum));

    // Every lane is done with the slot; order its generic-proxy accesses before the TMA refill.
    __syncwarp();
    if (lane == 0) {
      const int next = row + STAGES * stride;
      if (next < M) {
        fk::fence_proxy_async_smem();
        fk::mbar_arrive_expect_tx(&full[slot], row_bytes);
        bulk_load(v, x + static_cast<size_t>(next) * N, row_bytes, &full[slot], policy);
      }
    }
    if (++slot == STAGES) {
      slot = 0;
      phase ^= 1u;
    }
  }
}

// ---- warp path --------------------------------------------------------------------------------
// Lane l holds float4 vectors l, l+32, ..., l+32*(WARP_ITEMS-1) of its row: each warp-wide load is
// 512 contiguous bytes. Vectors past the row end stay empty (-inf for the max, skipped after).
__device__ __forceinline__ void softmax_warp_row(const float* __restrict__ x, float* __restrict__ y, int M,
                                                 int N) {
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
    v[i] = idx < nvec ? fk::load<kLoadX>(&xrow[idx])
                   : make_float4(fk::neg_inf(), fk::neg_inf(), fk::neg_inf(), fk::neg_inf());
    m = fmaxf(m, max4(v[i]));
  }
  m = fk::warp_max(m);

  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < WARP_ITEMS; ++i) {
    if (i * kWarp + lane < nvec) {
      v[i] = exp4_minus(v[i], m);
      sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }
  const float inv_sum = 1.f / fk::warp_sum(sum);
#pragma unroll
  for (int i = 0; i < WARP_ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    if (idx < nvec) fk::store<kStoreY>(&yrow[idx], scale4(v[i], inv_sum));
  }
}

// ---- cluster path -----------------------------------------------------------------------------
// The online-softmax state of a set of values: their max and the sum of exp(value - max).
using RowStat = fk::SoftmaxState;

// Row r -> CTAs r*C .. r*C + C - 1 of the cluster (C = cluster size); CTA rank k owns float4
// vectors [k*slice, min(nvec, (k+1)*slice)); thread t holds vectors t, t+T, ... of that slice:
// [CTA_ITEMS] float4 in registers (the manifest launches T >= slice / CTA_ITEMS threads).
__device__ __forceinline__ void softmax_cluster_row(const float* __restrict__ x, float* __restrict__ y, int N) {
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

  float4 v[CTA_ITEMS];  // all loads issued before any is used
  float m = fk::neg_inf();
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    const int idx = begin + i * threads + tid;
    v[i] = idx < end ? fk::load<kLoadX>(&xrow[idx])
                  : make_float4(fk::neg_inf(), fk::neg_inf(), fk::neg_inf(), fk::neg_inf());
    m = fmaxf(m, max4(v[i]));
  }

  // Exponentiate against the thread's own max (one exp per element); rescale at the end, so the
  // CTA and the cluster reduce (max, sum) in one round.
  RowStat s{m, 0.f};
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    if (begin + i * threads + tid < end) {
      v[i] = exp4_minus(v[i], m);
      s.sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }

  s = fk::warp_softmax_merge(s);
  const int warp = tid / kWarp, lane = tid % kWarp;
  if (lane == 0) warp_stat[warp] = s;
  __syncthreads();
  if (warp == 0) {
    RowStat w = lane < threads / kWarp ? warp_stat[lane] : RowStat{fk::neg_inf(), 0.f};
    w = fk::warp_softmax_merge(w);
    if (lane == 0) cta_stat = w;
  }

  // Cluster exchange: the first barrier publishes every cta_stat; all CTAs read the states in rank
  // order (same result bit for bit); the split second barrier keeps peers' shared memory alive
  // until our reads are done while the stores go ahead.
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

  const float scale = __expf(m - row_stat.max) / row_stat.sum;
#pragma unroll
  for (int i = 0; i < CTA_ITEMS; ++i) {
    const int idx = begin + i * threads + tid;
    if (idx < end) fk::store<kStoreY>(&yrow[idx], scale4(v[i], scale));
  }

  if (ctas > 1) cluster.barrier_wait();
}

// One kernel per path, each launched only for the row lengths its path serves (the manifest's
// `when`), so that each is compiled for its own block size: a kernel that may run 1024 threads is
// held to 64 registers, which a 128-thread CTA row does not need (measured on H200 at 16384x4096:
// the same CTA-row code 1.018x faster when bounded to 128 threads than under a 1024-thread bound).
constexpr int kMidThreads = 256;  // CTA rows of up to this many threads take softmax_rows_cta

extern "C" __global__ void __launch_bounds__(32 * WARP_ROWS)
softmax_rows_warp(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  softmax_warp_row(x, y, M, N);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
softmax_rows_bulk(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  softmax_bulk_rows(x, y, M, N);
}

extern "C" __global__ void __launch_bounds__(kMidThreads)
softmax_rows_cta(const float* __restrict__ x, float* __restrict__ y, int N) {
  softmax_cluster_row(x, y, N);
}

extern "C" __global__ void __launch_bounds__(kMaxThreads)
softmax_rows_cta_long(const float* __restrict__ x, float* __restrict__ y, int N) {
  softmax_cluster_row(x, y, N);
}
