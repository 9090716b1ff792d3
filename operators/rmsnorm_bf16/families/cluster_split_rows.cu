/* forgek
{
  "name": "rmsnorm_cluster_split_rows",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "memory_level_parallelism", "vector_16B",
                 "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "tile": ["THREADS", "ITEMS"],
               "memory_level_parallelism": ["W_EARLY"], "cache_hint": ["LOAD_CS"]},
  "params": {"CLUSTER": [8, 4, 2], "THREADS": [128, 64, 256, 512], "ITEMS": [1, 2, 4, 8],
             "W_EARLY": [1, 0], "LOAD_CS": [0, 1]},
  "let": {"slice": "N / CLUSTER", "slice_capacity": "THREADS*ITEMS*8"},
  "constraints": ["N % (8*CLUSTER) == 0", "slice <= slice_capacity", "slice_capacity <= 2*slice"],
  "launches": [
    {"kernel": "rmsnorm_bf16_cluster_split_rows",
     "grid": ["CLUSTER*M"], "block": ["THREADS"], "cluster": ["CLUSTER"],
     "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// RMSNorm of bf16 rows for few-row (decode) shapes: each row is split across a thread-block cluster
// of CLUSTER CTAs, so M = 128 rows become 128*CLUSTER CTAs and every SM holds several CTAs' worth
// of loads in flight; the CTA partial sums of squares meet through distributed shared memory.
//   row r       -> CTAs blockIdx.x = r*CLUSTER .. r*CLUSTER + CLUSTER-1 (one cluster)
//   CTA rank k  -> 16-byte vectors [k*S, (k+1)*S) of the row, S = N/8/CLUSTER
//   thread t    -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of the slice (S <= capacity <= 2S)
// W_EARLY = 1 issues the loads of w together with those of x, before the reduction: on a cold L2
// the w round trip then overlaps the x round trip instead of following the cluster barrier (costs
// ITEMS*4 registers across the barrier). W_EARLY = 0 loads w after the reduction, as the reference.
// LOAD_CS = 1 loads x evict-first; 0 uses plain loads (measured faster on the large shape).
// Exchange: each CTA publishes its sum in shared memory; after a cluster barrier every warp reads
// the CLUSTER sums (lane k reads rank k) and adds them by a butterfly, so all threads of all CTAs
// get the same rstd bit for bit. The closing barrier is split (arrive after reading peers, wait
// before exit) so that no CTA leaves while a peer may still read its shared memory.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
static_assert(CLUSTER <= kWarp, "one lane per cluster rank in the exchange");
// x is read once: LOAD_CS = 1 loads it evict-first.
constexpr fk::LoadHint kLoadX = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_bf16_cluster_split_rows(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                const __nv_bfloat16* __restrict__ w,  // [N]
                                __nv_bfloat16* __restrict__ y,        // [M, N]
                                int M, int N, float eps) {
  __shared__ float warp_partial[THREADS / kWarp];  // [THREADS/32] per-warp sums of squares
  __shared__ float cta_partial;                     // this CTA's sum; peers read it through DSMEM
  const int rank = static_cast<int>(blockIdx.x % CLUSTER);  // 1-D cluster of consecutive CTAs
  const int row = blockIdx.x / CLUSTER;                     // grid = CLUSTER*M: row < M
  const int tid = threadIdx.x;
  const int slice = N / 8 / CLUSTER;  // vectors per CTA (N % (8*CLUSTER) == 0)
  const size_t first = static_cast<size_t>(row) * (N / 8) + static_cast<size_t>(rank) * slice;
  const uint4* xs = reinterpret_cast<const uint4*>(x) + first;  // [slice] this CTA's part of the row
  uint4* ys = reinterpret_cast<uint4*>(y) + first;               // [slice]
  const uint4* ws = reinterpret_cast<const uint4*>(w) + static_cast<size_t>(rank) * slice;  // [slice]

  uint4 v[ITEMS];  // [ITEMS] x 8 bf16 of x; past the slice: zero
#if W_EARLY
  uint4 g[ITEMS];  // [ITEMS] x 8 bf16 of w, loaded with x
#endif
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    v[i] = make_uint4(0, 0, 0, 0);
    if (idx < slice) v[i] = fk::load<kLoadX>(xs + idx);
#if W_EARLY
    if (idx < slice) g[i] = __ldg(ws + idx);
#endif
  }

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[8];
    fk::unpack_bf16x8(v[i], f);
#pragma unroll
    for (int k = 0; k < 8; ++k) sq = fmaf(f[k], f[k], sq);
  }
  const float cta_sum = fk::block_sum(sq, warp_partial);
  if (tid == 0) cta_partial = cta_sum;

  fk::cluster_sync();  // release/acquire: every cta_partial is visible cluster-wide
  const int lane = tid % kWarp;
  float part = 0.f;
  if (lane < CLUSTER) part = fk::ld_shared_cluster_f32(fk::map_shared_rank(&cta_partial, lane));
  const float row_sum = fk::warp_sum(part);
  fk::cluster_arrive();  // done reading peers' shared memory
  const float rstd = rsqrtf(row_sum / N + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    if (idx < slice) {
      float f[8], h[8];
      fk::unpack_bf16x8(v[i], f);
#if W_EARLY
      fk::unpack_bf16x8(g[i], h);
#else
      fk::unpack_bf16x8(__ldg(ws + idx), h);
#endif
#pragma unroll
      for (int k = 0; k < 8; ++k) f[k] = f[k] * rstd * h[k];
      fk::st_global_cs(ys + idx, fk::pack_bf16x8(f));
    }
  }
  fk::cluster_wait();  // peers have read our cta_partial
}
