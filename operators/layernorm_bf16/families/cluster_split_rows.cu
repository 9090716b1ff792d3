/* forgek
{
  "name": "layernorm_cluster_split_rows",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "vector_16B", "register_row_cache",
                 "warp_shuffle_reduction", "streaming_store", "memory_level_parallelism"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "block_size": ["THREADS"], "register_row_cache": ["ITEMS"],
               "streaming_store": ["CACHE_HINT"], "memory_level_parallelism": ["AFFINE_EARLY"]},
  "params": {"CLUSTER": [4, 8, 2], "THREADS": [128, 256, 64, 512], "ITEMS": [2, 1, 4, 8],
             "CACHE_HINT": [1, 0], "AFFINE_EARLY": [1, 0]},
  "let": {"slice_vec": "N/(8*CLUSTER)", "slots": "ITEMS*THREADS"},
  "constraints": ["N % (8*CLUSTER) == 0", "slice_vec <= slots", "slots <= 2*slice_vec",
                  "THREADS <= slice_vec"],
  "launches": [
    {"kernel": "layernorm_bf16_cluster_split_rows", "grid": ["CLUSTER*M"], "block": ["THREADS"],
     "cluster": ["CLUSTER"],
     "args": ["x", "gamma", "beta", "y", "M", "N", "eps"]}
  ]
}
*/
// LayerNorm of bf16 rows, each row split across a thread-block cluster of CLUSTER CTAs that merge their
// statistics through distributed shared memory: CLUSTER*M CTAs, so a few rows (decode) still fill the GPU.
//
//   row r          -> cluster of CTAs blockIdx.x = r*CLUSTER ... r*CLUSTER + CLUSTER-1
//   CTA rank k     -> slice [k*S, (k+1)*S) of the row, S = N/CLUSTER elements = slice_vec 16-byte vectors
//   thread t       -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of the slice, held in registers
// Statistics in one cluster exchange (Chan's parallel merge; every slice holds n = S elements):
//   CTA k:   mean_k = sum(x) / n,  M2_k = sum((x - mean_k)^2)   (two-pass on registers: exact)
//   cluster: mean = avg_k mean_k,  M2 = sum_k M2_k + n * sum_k (mean_k - mean)^2,  var = M2 / N
// Every CTA reads the CLUSTER (mean_k, M2_k) pairs in rank order, so all compute the same mean and rstd
// bit for bit. The closing cluster barrier is split: arrive once the peers' stats are read, wait just
// before exit, so stores proceed while slower peers finish reading.
// AFFINE_EARLY 1: the slice's gamma and beta are loaded with x, so their cold-L2 miss overlaps it.
// CACHE_HINT 1: evict-first loads of x and streaming stores of y; 0: plain accesses.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kVec = 8;  // bf16 per 16-byte vector

// CACHE_HINT 1: x (read once) evict-first, y (never read back here) streamed.
constexpr fk::LoadHint kLoadX = CACHE_HINT ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreY = CACHE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_bf16_cluster_split_rows(const __nv_bfloat16* __restrict__ x,      // [M, N]
                                  const __nv_bfloat16* __restrict__ gamma,  // [N]
                                  const __nv_bfloat16* __restrict__ beta,   // [N]
                                  __nv_bfloat16* __restrict__ y,            // [M, N]
                                  int M, int N, float eps) {
  __shared__ float sum_partial[THREADS / kWarp];  // [warps] one per block_sum call: no trailing barrier
  __shared__ float sq_partial[THREADS / kWarp];
  __shared__ float4 cta_stat;  // (mean_k, M2_k, -, -) of this slice; peers read it through DSMEM

  // The grid is CLUSTER*M CTAs, so every row exists: no early exit (each CTA must reach the cluster barriers).
  const int rank = static_cast<int>(fk::cluster_ctarank());
  const int row = blockIdx.x / CLUSTER;
  const int tid = threadIdx.x;
  const int slice_vec = N / (kVec * CLUSTER);  // N % (8*CLUSTER) == 0 (a constraint): slices are whole vectors
  const size_t slice_begin = static_cast<size_t>(row) * N + static_cast<size_t>(rank) * slice_vec * kVec;
  const uint4* xs = reinterpret_cast<const uint4*>(x + slice_begin);                     // [slice_vec]
  uint4* ys = reinterpret_cast<uint4*>(y + slice_begin);                                 // [slice_vec]
  const uint4* gs = reinterpret_cast<const uint4*>(gamma) + static_cast<size_t>(rank) * slice_vec;  // [slice_vec]
  const uint4* bs = reinterpret_cast<const uint4*>(beta) + static_cast<size_t>(rank) * slice_vec;   // [slice_vec]

  // Every load of the slice is issued before any math.
  uint4 v[ITEMS];                                                  // [ITEMS] x 8 bf16 of x; padding is zero
  uint4 g[AFFINE_EARLY ? ITEMS : 1], b[AFFINE_EARLY ? ITEMS : 1];  // [ITEMS] x 8 bf16 of gamma, beta
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    const bool in_slice = idx < slice_vec;
    v[i] = in_slice ? fk::load<kLoadX>(xs + idx) : make_uint4(0, 0, 0, 0);
    if constexpr (AFFINE_EARLY) {
      g[i] = in_slice ? fk::ld_global_nc_na(gs + idx) : make_uint4(0, 0, 0, 0);
      b[i] = in_slice ? fk::ld_global_nc_na(bs + idx) : make_uint4(0, 0, 0, 0);
    }
  }

  const float n_slice = static_cast<float>(slice_vec * kVec);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[kVec];
    fk::unpack_bf16x8(v[i], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) sum += f[k];
  }
  const float slice_mean = fk::block_sum(sum, sum_partial) / n_slice;

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (i * THREADS + tid < slice_vec) {  // padding would add slice_mean^2
      float f[kVec];
      fk::unpack_bf16x8(v[i], f);
#pragma unroll
      for (int k = 0; k < kVec; ++k) sq = fmaf(f[k] - slice_mean, f[k] - slice_mean, sq);
    }
  }
  const float slice_m2 = fk::block_sum(sq, sq_partial);
  if (tid == 0) cta_stat = make_float4(slice_mean, slice_m2, 0.f, 0.f);

  // Publish cta_stat cluster-wide (release / acquire), then merge the CLUSTER slices in rank order.
  fk::cluster_sync();
  float means[CLUSTER];  // [CLUSTER] slice means
  float m2 = 0.f, mean = 0.f;
#pragma unroll
  for (int k = 0; k < CLUSTER; ++k) {
    const float4 s = fk::ld_dsmem_f4(&cta_stat, k);
    means[k] = s.x;
    mean += s.x;
    m2 += s.y;
  }
  mean /= CLUSTER;
  float spread = 0.f;
#pragma unroll
  for (int k = 0; k < CLUSTER; ++k) spread = fmaf(means[k] - mean, means[k] - mean, spread);
  m2 = fmaf(n_slice, spread, m2);
  const float rstd = rsqrtf(m2 / N + eps);
  fk::cluster_arrive();  // this CTA has read its peers' shared memory (the loads fed rstd above)

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    if (idx < slice_vec) {
      float f[kVec], gf[kVec], bf[kVec];
      fk::unpack_bf16x8(v[i], f);
      if constexpr (AFFINE_EARLY) {
        fk::unpack_bf16x8(g[i], gf);
        fk::unpack_bf16x8(b[i], bf);
      } else {
        fk::unpack_bf16x8(fk::ld_global_nc_na(gs + idx), gf);
        fk::unpack_bf16x8(fk::ld_global_nc_na(bs + idx), bf);
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) f[k] = fmaf((f[k] - mean) * rstd, gf[k], bf[k]);
      fk::store<kStoreY>(ys + idx, fk::pack_bf16x8(f));
    }
  }

  fk::cluster_wait();  // peers may still be reading cta_stat: keep this CTA's shared memory alive
}
