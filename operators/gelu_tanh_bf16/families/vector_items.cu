/* forgek
{
  "name": "gelu_tanh_vector_items",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["ITEMS"], "vector_16B": ["VEC"],
               "cache_hint": ["LOAD_HINT"], "streaming_store": ["STORE_HINT"], "tanh_form": ["TANH"]},
  "params": {"THREADS": [256, 128, 512], "ITEMS": [2, 4, 8], "VEC": [8, 4],
             "LOAD_HINT": [1, 0], "STORE_HINT": [1, 0], "TANH": [1, 0]},
  "let": {"cta_vecs": "THREADS*ITEMS"},
  "constraints": ["N % VEC == 0"],
  "launches": [
    {"kernel": "gelu_tanh_vector_items", "grid": ["ceil_div(N/VEC, cta_vecs)"], "block": ["THREADS"],
     "args": ["x", "y", "N"]}
  ]
}
*/
// tanh-GELU over a flat bf16 vector, the reference's design with its knobs as params.
//
//   x, y  [N] bf16, viewed as [N/VEC] vectors of VEC bf16 (VEC = 8: 16-byte accesses, 4: 8-byte)
//   CTA b    -> vectors [b*THREADS*ITEMS, (b+1)*THREADS*ITEMS)
//   thread t -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of that range: every warp access is
//               32 consecutive vectors, and all ITEMS loads are issued before any math (ITEMS*VEC*2
//               bytes in flight per thread).
// LOAD_HINT: 1 = evict-first loads (ld.global.cs), 0 = read-only path (ld.global.nc, no L1
// allocation for 16-byte vectors). STORE_HINT: 1 = streaming stores (st.global.cs), 0 = plain.
// TANH: 1 = y = 0.5x + 0.5x*tanh(u) with tanh.approx (one MUFU op, 6 instructions), 0 = the
// reference's sigmoid form y = x / (1 + exp(-2u)) (two MUFU ops: ex2 and the reciprocal).
// The traffic is 4 bytes per element: at ~4.3 TB/s an SM must retire ~4 elements per cycle, so the
// math has ~30 instructions per element; both forms fit, tanh.approx leaves more issue slack.
#include <cuda_bf16.h>
#include <forgek/activation.cuh>
#include <forgek/vec.cuh>

// VEC bf16 moved as one access: uint4 (16 B) or uint2 (8 B).
using Vector = fk::Access<2 * VEC>;
// The hints above: LOAD_HINT 0 is the read-only path, without L1 allocation for 16-byte vectors only.
constexpr fk::LoadHint kLoad = LOAD_HINT   ? fk::LoadHint::cs
                               : VEC == 8 ? fk::LoadHint::nc_na
                                          : fk::LoadHint::nc;
constexpr fk::StoreHint kStore = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

// y = 0.5 * x * (1 + tanh(k * (x + 0.044715 x^3))), k = sqrt(2/pi), in fp32, in the TANH form.
__device__ __forceinline__ float gelu_tanh(float x) {
  return TANH ? fk::gelu_tanh_approx(x) : fk::gelu_tanh_sigmoid(x);
}

// GELU of the VEC bf16 packed in one vector (pairs: the low half is the lower address).
__device__ __forceinline__ Vector gelu_vector(Vector in) {
  unsigned* w = reinterpret_cast<unsigned*>(&in);
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = fk::unpack_bf16x2(w[k]);
    w[k] = fk::pack_bf16x2(gelu_tanh(f.x), gelu_tanh(f.y));
  }
  return in;
}

extern "C" __global__ void __launch_bounds__(THREADS)
gelu_tanh_vector_items(const __nv_bfloat16* __restrict__ x,  // [N]
                       __nv_bfloat16* __restrict__ y,        // [N]
                       int N) {
  const int nvec = N / VEC;  // N % VEC == 0 (a manifest constraint)
  const int first = blockIdx.x * (THREADS * ITEMS) + threadIdx.x;
  const Vector* xv = reinterpret_cast<const Vector*>(x);
  Vector* yv = reinterpret_cast<Vector*>(y);

  Vector v[ITEMS];  // [ITEMS] vectors in flight per thread
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) v[i] = fk::load<kLoad>(xv + idx);
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = first + i * THREADS;
    if (idx < nvec) fk::store<kStore>(yv + idx, gelu_vector(v[i]));
  }
}
