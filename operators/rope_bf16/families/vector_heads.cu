/* forgek
{
  "name": "rope_vector_heads",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"vector_16B": ["VEC"], "memory_level_parallelism": ["ITEMS"], "block_size": ["THREADS"],
               "cache_hint": ["LOAD_HINT"], "streaming_store": ["STORE_HINT"]},
  "params": {"VEC": [8, 4], "ITEMS": [1, 2, 4, 8], "THREADS": [256, 128, 512],
             "LOAD_HINT": [1, 0], "STORE_HINT": [1, 0]},
  "let": {"chunks": "D/(2*VEC)", "threads_per_token": "(H/ITEMS)*chunks"},
  "constraints": ["D % (2*VEC) == 0", "H % ITEMS == 0", "T*threads_per_token <= 2147483647"],
  "launches": [
    {"kernel": "rope_vector_heads", "grid": ["ceil_div(T*threads_per_token, THREADS)"], "block": ["THREADS"],
     "args": ["q", "positions", "cos_sin_cache", "q_rot", "T", "H", "D"]}
  ]
}
*/
// NeoX RoPE, out of place, the reference's design (reference.cu) with its knobs opened up: one read
// of q, one write of q_rot, the cos/sin of a chunk held in registers across ITEMS heads.
//
// Thread g of a token owns chunk j (VEC consecutive rotation pairs: q[t,h, VEC*j .. VEC*j+VEC) and
// q[t,h, D/2+VEC*j .. D/2+VEC*j+VEC)) of the ITEMS heads h = hg, hg + H/ITEMS, hg + 2H/ITEMS, ...:
//   per token: [H/ITEMS head groups][D/(2*VEC) chunks] threads, j fastest, then hg
// so at each item k a warp reads 32/chunks whole consecutive heads (contiguous bytes). The chunk's
// cos and sin (2*VEC floats of cache row positions[t]) are loaded once and reused for all ITEMS
// heads: ITEMS > 1 divides the cache-row L1 traffic (which is twice the q traffic at ITEMS = 1)
// and puts 2*ITEMS q vectors in flight per thread before any math (memory-level parallelism).
//   VEC = 8: 16-byte q accesses (the reference); VEC = 4: 8-byte accesses, twice the threads
//            (more, smaller CTAs for decode-sized T).
//   LOAD_HINT 1: q read with ld.global.cs (evict-first, the reference); 0: ld.global.nc without L1
//            allocation (read-only path).
//   STORE_HINT 1: q_rot written with st.global.cs (evict-first, the reference); 0: plain stores.
// The cache always goes through the read-only path with L1 allocation: every head of a token
// re-reads its row, and L1 serves those.
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

// VEC bf16 of one half of a head: 16 bytes (VEC = 8) or 8 bytes (VEC = 4).
using Pack = fk::Access<2 * VEC>;
// The hints above: LOAD_HINT 0 is the read-only path, without L1 allocation for 16-byte packs only.
constexpr fk::LoadHint kLoadQ = LOAD_HINT   ? fk::LoadHint::cs
                                : VEC == 8 ? fk::LoadHint::nc_na
                                           : fk::LoadHint::nc;
constexpr fk::StoreHint kStoreQ = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

__device__ __forceinline__ Pack load_q(const __nv_bfloat16* p) {
  return fk::load<kLoadQ>(reinterpret_cast<const Pack*>(p));
}
__device__ __forceinline__ void store_q(__nv_bfloat16* p, const Pack& v) {
  fk::store<kStoreQ>(reinterpret_cast<Pack*>(p), v);
}

// VEC consecutive floats (16-byte aligned) of the cos/sin cache through the read-only path.
__device__ __forceinline__ void load_cache(const float* p, float (&f)[VEC]) {
#pragma unroll
  for (int k = 0; k < VEC / 4; ++k) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(p) + k);
    f[4 * k] = a.x, f[4 * k + 1] = a.y, f[4 * k + 2] = a.z, f[4 * k + 3] = a.w;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
rope_vector_heads(const __nv_bfloat16* __restrict__ q,      // [T, H, D]
                  const int* __restrict__ positions,        // [T], in [0, P)
                  const float* __restrict__ cos_sin_cache,  // [P, D]: cos in [0, D/2), sin in [D/2, D)
                  __nv_bfloat16* __restrict__ q_rot,        // [T, H, D]
                  int T, int H, int D) {
  // 32-bit index math: the manifest bounds the thread count by 2^31.
  const unsigned chunks = D / (2 * VEC);      // VEC-pair chunks per head
  const unsigned groups = H / ITEMS;          // head groups per token (heads hg + k*groups)
  const unsigned per_token = groups * chunks; // threads per token
  const unsigned g = blockIdx.x * THREADS + threadIdx.x;
  if (g >= static_cast<unsigned>(T) * per_token) return;
  const unsigned t = g / per_token;
  const unsigned r = g - t * per_token;
  const unsigned hg = r / chunks;
  const unsigned j = r - hg * chunks;
  const int half = D / 2;

  // Issue every q load of the thread first, then the (dependent) position -> cache-row loads.
  const size_t head_stride = static_cast<size_t>(groups) * D;  // elements between items k and k+1
  const __nv_bfloat16* qp = q + (static_cast<size_t>(t) * H + hg) * D + VEC * j;
  Pack lo[ITEMS], hi[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    lo[k] = load_q(qp + k * head_stride);
    hi[k] = load_q(qp + k * head_stride + half);
  }
  const float* row = cos_sin_cache + static_cast<size_t>(__ldg(positions + t)) * D;
  float c[VEC], s[VEC];
  load_cache(row + VEC * j, c);
  load_cache(row + half + VEC * j, s);

  __nv_bfloat16* op = q_rot + (static_cast<size_t>(t) * H + hg) * D + VEC * j;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    float x1[VEC], x2[VEC], out1[VEC], out2[VEC];
    fk::unpack_bf16(lo[k], x1);
    fk::unpack_bf16(hi[k], x2);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      out1[e] = x1[e] * c[e] - x2[e] * s[e];
      out2[e] = x2[e] * c[e] + x1[e] * s[e];
    }
    store_q(op + k * head_stride, fk::pack_bf16(out1));
    store_q(op + k * head_stride + half, fk::pack_bf16(out2));
  }
}
