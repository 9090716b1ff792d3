/* forgek
{
  "name": "layernorm_row_per_cta",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "register_row_cache": ["ITEMS"], "vector_16B": ["VEC"],
               "streaming_store": ["CACHE_HINT"], "memory_level_parallelism": ["AFFINE_EARLY"]},
  "params": {"THREADS": [128, 256, 64, 512, 1024], "ITEMS": [4, 2, 8, 1, 16], "VEC": [8, 4],
             "CACHE_HINT": [1, 0], "AFFINE_EARLY": [0, 1]},
  "let": {"nvec": "N/VEC", "slots": "ITEMS*THREADS", "cached_bf16": "ITEMS*VEC*(1 + 2*AFFINE_EARLY)"},
  "constraints": ["N % VEC == 0", "nvec <= slots", "slots <= 2*nvec", "THREADS <= nvec",
                  "cached_bf16 <= 192"],
  "launches": [
    {"kernel": "layernorm_bf16_row_per_cta", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "gamma", "beta", "y", "M", "N", "eps"]}
  ]
}
*/
// LayerNorm of bf16 rows, one CTA per row, the row held in registers: the reference's design with its knobs.
//
//   row r          -> CTA blockIdx.x = r, THREADS threads
//   thread t       -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of the row; a vector is VEC
//                     consecutive bf16 moved in one access (VEC 8: 16 bytes, VEC 4: 8 bytes)
//   constraints    -> ITEMS*THREADS vector slots cover the row, at most half of them idle (an idle
//                     slot loads nothing and adds nothing), so that one instance serves rows of N and
//                     2N; every thread owns at least one vector
//   mean = CTA sum of x / N; var = CTA sum of (x - mean)^2 / N (two-pass on registers: exact)
//   y    = (x - mean) * rstd * gamma + beta
// CACHE_HINT 1: x read with evict-first loads, y written with streaming stores (neither is reused, so
//   L2 is left to gamma and beta); 0: plain accesses (measured, not assumed).
// AFFINE_EARLY 1: gamma and beta are loaded together with x, before the reductions, so a cold-L2 miss on
//   them overlaps the x loads instead of following both reductions (matters when the kernel is
//   latency-bound: few rows); 0: loaded after the reductions (fewer live registers, more CTAs per SM).
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// VEC bf16 moved as one access: uint4 (16 B) or uint2 (8 B).
using Raw = fk::Access<2 * VEC>;
// CACHE_HINT 1: x (read once) evict-first, y (never read back here) streamed.
constexpr fk::LoadHint kLoadX = CACHE_HINT ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreY = CACHE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_bf16_row_per_cta(const __nv_bfloat16* __restrict__ x,      // [M, N]
                           const __nv_bfloat16* __restrict__ gamma,  // [N]
                           const __nv_bfloat16* __restrict__ beta,   // [N]
                           __nv_bfloat16* __restrict__ y,            // [M, N]
                           int M, int N, float eps) {
  __shared__ float sum_partial[THREADS / kWarp];  // [warps] one per block_sum call: no trailing barrier
  __shared__ float sq_partial[THREADS / kWarp];
  const int row = blockIdx.x;
  if (row >= M) return;  // the whole CTA leaves together
  const int tid = threadIdx.x;
  const int nvec = N / VEC;  // N % VEC == 0 (a constraint) keeps every vector aligned
  const Raw* xrow = reinterpret_cast<const Raw*>(x + static_cast<size_t>(row) * N);
  Raw* yrow = reinterpret_cast<Raw*>(y + static_cast<size_t>(row) * N);
  const Raw* gamma_v = reinterpret_cast<const Raw*>(gamma);
  const Raw* beta_v = reinterpret_cast<const Raw*>(beta);

  // Every load of the row (and, with AFFINE_EARLY, of gamma and beta) is issued before any math.
  Raw v[ITEMS];                                   // [ITEMS] x VEC bf16 of x; padding is zero
  Raw g[AFFINE_EARLY ? ITEMS : 1], b[AFFINE_EARLY ? ITEMS : 1];  // [ITEMS] x VEC bf16 of gamma, beta
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    const bool in_row = idx < nvec;
    v[i] = Raw{};
    if constexpr (AFFINE_EARLY) g[i] = Raw{}, b[i] = Raw{};
    if (in_row) {
      v[i] = fk::load<kLoadX>(xrow + idx);
      if constexpr (AFFINE_EARLY) {
        g[i] = __ldg(gamma_v + idx);
        b[i] = __ldg(beta_v + idx);
      }
    }
  }

  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[VEC];
    fk::unpack_bf16(v[i], f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) sum += f[k];
  }
  const float mean = fk::block_sum(sum, sum_partial) / N;

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (i * THREADS + tid < nvec) {  // padding would add mean^2
      float f[VEC];
      fk::unpack_bf16(v[i], f);
#pragma unroll
      for (int k = 0; k < VEC; ++k) sq = fmaf(f[k] - mean, f[k] - mean, sq);
    }
  }
  const float rstd = rsqrtf(fk::block_sum(sq, sq_partial) / N + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    if (idx < nvec) {
      float f[VEC], gf[VEC], bf[VEC];
      fk::unpack_bf16(v[i], f);
      if constexpr (AFFINE_EARLY) {
        fk::unpack_bf16(g[i], gf);
        fk::unpack_bf16(b[i], bf);
      } else {
        fk::unpack_bf16(__ldg(gamma_v + idx), gf);  // shared by every row: an L2 hit after the first rows
        fk::unpack_bf16(__ldg(beta_v + idx), bf);
      }
#pragma unroll
      for (int k = 0; k < VEC; ++k) f[k] = fmaf((f[k] - mean) * rstd, gf[k], bf[k]);
      fk::store<kStoreY>(yrow + idx, fk::pack_bf16(f));
    }
  }
}
