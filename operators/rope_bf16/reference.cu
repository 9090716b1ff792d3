/* forgek
{
  "name": "rope_neox_vector8",
  "mechanisms": ["vector_16B", "streaming_store"],
  "params": {"THREADS": 256},
  "constraints": ["D % 16 == 0", "T*H*(D/16) <= 2147483647"],
  "launches": [
    {"kernel": "rope_bf16_reference", "grid": ["ceil_div(T*H*(D/16), THREADS)"], "block": ["THREADS"],
     "args": ["q", "positions", "cos_sin_cache", "q_rot", "T", "H", "D"]}
  ]
}
*/
// Expert NeoX-style RoPE, out of place: one read of q, one write of q_rot, 16-byte accesses.
//
// Thread g rotates 8 consecutive pairs: chunk j = g % (D/16) of head g / (D/16) (heads are the
// flattened (t, h)). It loads q[t,h, 8j .. 8j+8) and q[t,h, D/2+8j .. D/2+8j+8) as two 16-byte
// vectors, the matching cos and sin as four float4 of the cache row positions[t], and stores two
// 16-byte vectors of q_rot. Consecutive threads walk one head, then the next, so a warp reads
// whole heads (D*2 = 256 contiguous bytes each at D = 128) and writes them back the same way.
// At H = 32, D = 128 a CTA of 256 threads is exactly one token: positions[t] is one broadcast
// load and the 512-byte cache row is read from DRAM once and then served by L1 to all 32 heads
// (the cache goes through the read-only path; q and q_rot are streamed, evict-first).
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

// 8 consecutive floats from 16-byte-aligned memory through the read-only path.
__device__ __forceinline__ void load8(const float* p, float (&f)[8]) {
  const float4 a = __ldg(reinterpret_cast<const float4*>(p));
  const float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

extern "C" __global__ void __launch_bounds__(THREADS)
rope_bf16_reference(const __nv_bfloat16* __restrict__ q,      // [T, H, D]
                    const int* __restrict__ positions,        // [T], in [0, P)
                    const float* __restrict__ cos_sin_cache,  // [P, D]: cos in [0, D/2), sin in [D/2, D)
                    __nv_bfloat16* __restrict__ q_rot,        // [T, H, D]
                    int T, int H, int D) {
  // 32-bit index math (the manifest bounds the thread count): a 64-bit division costs ~4x more.
  const unsigned chunks = D / 16;  // 8-pair chunks per head
  const unsigned g = blockIdx.x * THREADS + threadIdx.x;
  if (g >= static_cast<unsigned>(T) * H * chunks) return;
  const unsigned j = g % chunks;
  const unsigned head = g / chunks;  // t*H + h
  const unsigned t = head / H;
  const int half = D / 2;

  // First half elements [8j, 8j+8), second half [D/2 + 8j, D/2 + 8j + 8) of this head.
  const __nv_bfloat16* qhead = q + static_cast<size_t>(head) * D;
  const uint4 lo = __ldcs(reinterpret_cast<const uint4*>(qhead + 8 * j));
  const uint4 hi = __ldcs(reinterpret_cast<const uint4*>(qhead + half + 8 * j));
  const float* row = cos_sin_cache + static_cast<long long>(__ldg(positions + t)) * D;
  float c[8], s[8], x1[8], x2[8];
  load8(row + 8 * j, c);
  load8(row + half + 8 * j, s);
  fk::unpack_bf16x8(lo, x1);
  fk::unpack_bf16x8(hi, x2);

  float out1[8], out2[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    out1[k] = x1[k] * c[k] - x2[k] * s[k];
    out2[k] = x2[k] * c[k] + x1[k] * s[k];
  }
  __nv_bfloat16* ohead = q_rot + static_cast<size_t>(head) * D;
  __stcs(reinterpret_cast<uint4*>(ohead + 8 * j), fk::pack_bf16x8(out1));
  __stcs(reinterpret_cast<uint4*>(ohead + half + 8 * j), fk::pack_bf16x8(out2));
}
