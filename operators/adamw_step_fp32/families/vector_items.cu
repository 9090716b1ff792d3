/* forgek
{
  "name": "adamw_step_vector_items",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["ITEMS"], "vector_16B": ["VEC"],
               "cache_hint": ["LOAD_HINT"], "streaming_store": ["STORE_HINT"]},
  "params": {"THREADS": [256, 128, 512], "ITEMS": [2, 1, 4], "VEC": [4, 2], "LOAD_HINT": [1, 0],
             "STORE_HINT": [1, 0]},
  "let": {"cta_vecs": "THREADS*ITEMS"},
  "constraints": ["N % VEC == 0"],
  "launches": [
    {"kernel": "adamw_step_vector_items", "grid": ["ceil_div(N/VEC, cta_vecs)"], "block": ["THREADS"],
     "args": ["p", "g", "m", "v", "lr", "beta1", "beta2", "eps", "weight_decay", "step", "N"]}
  ]
}
*/
// Fused AdamW step over N fp32 parameters, the reference's design with its knobs as params.
//
//   p, g, m, v  [N] fp32 (p, m, v updated in place), viewed as [N/VEC] vectors of VEC floats
//               (VEC = 4: 16-byte accesses, 2: 8-byte)
//   CTA b    -> vectors [b*THREADS*ITEMS, (b+1)*THREADS*ITEMS) of all four streams
//   thread t -> vectors t, t+THREADS, ... of that range; all 4*ITEMS loads are issued before any
//               math (4*ITEMS*VEC*4 bytes in flight per thread): with four streams in and three
//               out, bytes in flight per SM, not arithmetic, set the pace.
// LOAD_HINT: 1 = evict-first loads (ld.global.cs), 0 = default-cached loads (not the read-only
// path: the kernel writes p, m and v). STORE_HINT: 1 = streaming stores (st.global.cs), 0 = plain.
// The arithmetic follows torch: step_size = lr / bc1, denominator sqrt(v) / sqrt(bc2) + eps.
#include <forgek/vec.cuh>

// VEC floats moved as one access.
using Pack = fk::FloatPack<VEC>;
constexpr fk::LoadHint kLoad = LOAD_HINT ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStore = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

__device__ __forceinline__ Pack load_pack(const float* base, int idx) {
  return fk::load_floats<VEC, kLoad>(base + static_cast<size_t>(idx) * VEC);
}
__device__ __forceinline__ void store_pack(float* base, int idx, const Pack& pack) {
  fk::store_floats<kStore>(base + static_cast<size_t>(idx) * VEC, pack);
}

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

extern "C" __global__ void __launch_bounds__(THREADS)
adamw_step_vector_items(float* __restrict__ p,        // [N], in place
                        const float* __restrict__ g,  // [N]
                        float* __restrict__ m,        // [N], in place
                        float* __restrict__ v,        // [N], in place
                        float lr, float beta1, float beta2, float eps, float weight_decay, int step, int N) {
  const int nvec = N / VEC;  // N % VEC == 0 (a manifest constraint)
  const int first = blockIdx.x * (THREADS * ITEMS) + threadIdx.x;

  Pack pv[ITEMS], gv[ITEMS], mv[ITEMS], vv[ITEMS];  // [ITEMS] vectors of each stream in flight
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) {
      pv[i] = load_pack(p, idx);
      gv[i] = load_pack(g, idx);
      mv[i] = load_pack(m, idx);
      vv[i] = load_pack(v, idx);
    }
  }

  // Bias corrections per thread, while the loads are in flight.
  const float bc1 = 1.f - powf(beta1, static_cast<float>(step));
  const float bc2 = 1.f - powf(beta2, static_cast<float>(step));
  const AdamW adam{1.f - lr * weight_decay, beta1, 1.f - beta1, beta2, 1.f - beta2,
                   lr / bc1, 1.f / sqrtf(bc2), eps};

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) {
      Pack out;
#pragma unroll
      for (int k = 0; k < VEC; ++k) out.v[k] = adam(pv[i].v[k], gv[i].v[k], mv[i].v[k], vv[i].v[k]);
      store_pack(p, idx, out);
      store_pack(m, idx, mv[i]);
      store_pack(v, idx, vv[i]);
    }
  }
}
