/* forgek
{
  "name": "silu_and_mul_vector_items",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["ITEMS"], "vector_16B": ["VEC"],
               "cache_hint": ["LOAD_HINT"], "streaming_store": ["STORE_HINT"]},
  "params": {"THREADS": [256, 128, 512], "ITEMS": [2, 1, 4, 8], "VEC": [8, 4], "LOAD_HINT": [1, 0],
             "STORE_HINT": [1, 0]},
  "let": {"cta_vecs": "THREADS*ITEMS"},
  "constraints": ["N % VEC == 0", "M*(N/VEC) <= 2147483647"],
  "launches": [
    {"kernel": "silu_and_mul_vector_items", "grid": ["ceil_div(M*(N/VEC), cta_vecs)"], "block": ["THREADS"],
     "args": ["x", "out", "M", "N"]}
  ]
}
*/
// SwiGLU out[m, n] = silu(x[m, n]) * x[m, N + n], the reference's flat design with its knobs as params.
//
//   x    [M, 2N] bf16: gate | up        out [M, N] bf16
//   out is cut into vectors of VEC bf16 (VEC = 8: 16-byte accesses, 4: 8-byte), numbered row by
//   row (v = m * N/VEC + c); x[m, VEC*c ..) is gate vector m*2*(N/VEC) + c, up is N/VEC further.
//   CTA b    -> output vectors [b*THREADS*ITEMS, (b+1)*THREADS*ITEMS)
//   thread t -> vectors t, t+THREADS, ... of that range (coalesced warp accesses); all 2*ITEMS
//               loads (gate and up) are issued before any math.
// LOAD_HINT: 1 = evict-first loads (ld.global.cs), 0 = read-only path (ld.global.nc, no L1
// allocation for 16-byte vectors). STORE_HINT: 1 = streaming stores (st.global.cs), 0 = plain.
// silu(a) = a / (1 + exp(-a)) with the fast exp and divide: a < -88 gives exp = inf and -0, the limit.
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

// VEC bf16 moved as one access: uint4 (16 B) or uint2 (8 B).
using Vector = fk::Access<2 * VEC>;
// The hints above: LOAD_HINT 0 is the read-only path, without L1 allocation for 16-byte vectors only.
constexpr fk::LoadHint kLoad = LOAD_HINT   ? fk::LoadHint::cs
                               : VEC == 8 ? fk::LoadHint::nc_na
                                          : fk::LoadHint::nc;
constexpr fk::StoreHint kStore = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

// silu(gate) * up for the VEC bf16 pairs of two vectors, in fp32, rounded to bf16 once.
__device__ __forceinline__ Vector silu_mul_vector(Vector gate, Vector up) {
  const unsigned* g = reinterpret_cast<const unsigned*>(&gate);
  const unsigned* u = reinterpret_cast<const unsigned*>(&up);
  Vector out;
  unsigned* o = reinterpret_cast<unsigned*>(&out);
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 a = fk::unpack_bf16x2(g[k]);
    const float2 b = fk::unpack_bf16x2(u[k]);
    o[k] = fk::pack_bf16x2(__fdividef(a.x, 1.f + __expf(-a.x)) * b.x, __fdividef(a.y, 1.f + __expf(-a.y)) * b.y);
  }
  return out;
}

extern "C" __global__ void __launch_bounds__(THREADS)
silu_and_mul_vector_items(const __nv_bfloat16* __restrict__ x,  // [M, 2N]: gate | up
                          __nv_bfloat16* __restrict__ out,      // [M, N]
                          int M, int N) {
  // 32-bit index math: the manifest bounds the vector count below 2^31.
  const unsigned row_vecs = N / VEC;  // output vectors per row; an input row has 2*row_vecs
  const unsigned total = static_cast<unsigned>(M) * row_vecs;
  const unsigned first = blockIdx.x * (THREADS * ITEMS) + threadIdx.x;
  const Vector* xv = reinterpret_cast<const Vector*>(x);
  Vector* ov = reinterpret_cast<Vector*>(out);

  Vector gate[ITEMS], up[ITEMS];  // [ITEMS] gate and up vectors in flight per thread
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const unsigned v = first + i * THREADS;
    if (v < total) {
      const unsigned m = v / row_vecs, c = v - m * row_vecs;
      const size_t in = static_cast<size_t>(m) * 2 * row_vecs + c;  // vector index of x[m, VEC*c]
      gate[i] = fk::load<kLoad>(xv + in);
      up[i] = fk::load<kLoad>(xv + in + row_vecs);
    }
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const unsigned v = first + i * THREADS;
    if (v < total) fk::store<kStore>(ov + v, silu_mul_vector(gate[i], up[i]));
  }
}
