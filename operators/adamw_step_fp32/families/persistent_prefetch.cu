/* forgek
{
  "name": "adamw_step_persistent_prefetch",
  "mechanisms": ["persistent_grid", "memory_level_parallelism", "vector_16B", "streaming_store"],
  "controls": {"persistent_grid": ["CTAS_PER_SM"], "block_size": ["THREADS"], "memory_level_parallelism": ["UNROLL"],
               "register_prefetch": ["PREFETCH"]},
  "params": {"CTAS_PER_SM": [4, 2, 8, 1], "THREADS": [256, 512, 128], "UNROLL": [2, 1, 4], "PREFETCH": [1, 0]},
  "let": {"tile_vecs": "THREADS*UNROLL"},
  "constraints": ["N % 4 == 0", "CTAS_PER_SM*THREADS <= 2048", "UNROLL*(1+PREFETCH) <= 4",
                  "N/4 + (num_sms*CTAS_PER_SM + 1)*tile_vecs < 2147483647"],
  "launches": [
    {"kernel": "adamw_step_persistent_prefetch",
     "grid": ["min(num_sms*CTAS_PER_SM, ceil_div(N/4, tile_vecs))"], "block": ["THREADS"],
     "args": ["p", "g", "m", "v", "lr", "beta1", "beta2", "eps", "weight_decay", "step", "N"]}
  ]
}
*/
// Fused AdamW step over N fp32 parameters with a persistent grid that software-pipelines its loads.
//
//   p, g, m, v  [N] fp32 (p, m, v in place), viewed as [N/4] float4, cut into tiles of
//               THREADS*UNROLL vectors
//   grid     -> CTAS_PER_SM CTAs per SM (num_sms SMs), launched once; CTA b takes tiles b, b+grid, ...
//   thread t -> vectors t, t+THREADS, ..., t+(UNROLL-1)*THREADS of each tile, in all four streams
// PREFETCH = 1: the 4*UNROLL loads of tile k+grid are issued before the math and the 3*UNROLL
// stores of tile k (a register double buffer): the thread always has a tile's loads outstanding
// and the DRAM read queue never drains between tiles. PREFETCH = 0: a plain grid-stride loop.
// The bias corrections are computed once per thread, not once per tile. Every stream is touched
// once: evict-first loads, streaming stores. Arithmetic as torch: step_size = lr / bc1,
// denominator sqrt(v) / sqrt(bc2) + eps.
#include <forgek/vec.cuh>

// The update of one parameter; m and v are updated in place, the new p is returned.
struct AdamW {
  float decay;  // 1 - lr * weight_decay
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;     // lr / bc1
  float inv_sqrt_bc2;  // 1 / sqrt(bc2)
  float eps;
  __device__ __forceinline__ float operator()(float p, float g, float& m, float& v) const {
    m = fmaf(beta1, m, one_minus_beta1 * g);
    v = fmaf(beta2, v, one_minus_beta2 * g * g);
    const float denom = fmaf(sqrtf(v), inv_sqrt_bc2, eps);
    return fmaf(-step_size, __fdividef(m, denom), p * decay);
  }
};

// One tile's worth of this thread's vectors: [UNROLL] float4 of each stream.
struct Tile {
  float4 p[UNROLL], g[UNROLL], m[UNROLL], v[UNROLL];
};

// Issues the loads of this thread's vectors of tile `tile` (vectors past nvec are skipped).
__device__ __forceinline__ void load_tile(Tile& t, const float* p, const float* g, const float* m, const float* v,
                                          int tile, int nvec) {
  const int first = tile * (THREADS * UNROLL) + threadIdx.x;
#pragma unroll
  for (int i = 0; i < UNROLL; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) {
      t.p[i] = __ldcs(reinterpret_cast<const float4*>(p) + idx);
      t.g[i] = __ldcs(reinterpret_cast<const float4*>(g) + idx);
      t.m[i] = __ldcs(reinterpret_cast<const float4*>(m) + idx);
      t.v[i] = __ldcs(reinterpret_cast<const float4*>(v) + idx);
    }
  }
}

__device__ __forceinline__ void update_tile(Tile& t, const AdamW& adam, float* p, float* m, float* v, int tile,
                                            int nvec) {
  const int first = tile * (THREADS * UNROLL) + threadIdx.x;
#pragma unroll
  for (int i = 0; i < UNROLL; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) {
      float4 out;
      out.x = adam(t.p[i].x, t.g[i].x, t.m[i].x, t.v[i].x);
      out.y = adam(t.p[i].y, t.g[i].y, t.m[i].y, t.v[i].y);
      out.z = adam(t.p[i].z, t.g[i].z, t.m[i].z, t.v[i].z);
      out.w = adam(t.p[i].w, t.g[i].w, t.m[i].w, t.v[i].w);
      fk::st_global_cs_f4(p + 4 * idx, out);
      fk::st_global_cs_f4(m + 4 * idx, t.m[i]);
      fk::st_global_cs_f4(v + 4 * idx, t.v[i]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
adamw_step_persistent_prefetch(float* __restrict__ p,        // [N], in place
                               const float* __restrict__ g,  // [N]
                               float* __restrict__ m,        // [N], in place
                               float* __restrict__ v,        // [N], in place
                               float lr, float beta1, float beta2, float eps, float weight_decay, int step,
                               int N) {
  const int nvec = N / 4;  // N % 4 == 0 (a manifest constraint)
  const int tiles = (nvec + THREADS * UNROLL - 1) / (THREADS * UNROLL);

  Tile cur;  // the tile being updated
  int tile = blockIdx.x;  // grid <= tiles: every CTA owns at least one tile
  load_tile(cur, p, g, m, v, tile, nvec);

  const float bc1 = 1.f - powf(beta1, static_cast<float>(step));
  const float bc2 = 1.f - powf(beta2, static_cast<float>(step));
  const AdamW adam{1.f - lr * weight_decay, beta1, 1.f - beta1, beta2, 1.f - beta2,
                   lr / bc1, 1.f / sqrtf(bc2), eps};

  for (; tile < tiles; tile += gridDim.x) {
    const int next = tile + gridDim.x;  // its loads are skipped past nvec (next >= tiles)
    if (PREFETCH) {
      Tile nxt;  // in flight during this tile's math and stores
      load_tile(nxt, p, g, m, v, next, nvec);
      update_tile(cur, adam, p, m, v, tile, nvec);
      cur = nxt;
    } else {
      update_tile(cur, adam, p, m, v, tile, nvec);
      load_tile(cur, p, g, m, v, next, nvec);
    }
  }
}
