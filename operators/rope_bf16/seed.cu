/* forgek
{
  "name": "rope_thread_per_pair",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "rope_bf16_seed", "grid": ["ceil_div(T*H*(D/2), THREADS)"], "block": ["THREADS"],
     "args": ["q", "positions", "cos_sin_cache", "q_rot", "T", "H", "D"]}
  ]
}
*/
// A plain starting point for NeoX-style RoPE: one thread per rotated pair (t, h, i), i < D/2.
// Each thread reads positions[t], two cache values and two q values with scalar loads and writes
// two outputs. Correct for any shape; left slow on purpose: 2-byte accesses, a 64-bit division
// per pair, and the cache row re-read by every head.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
rope_bf16_seed(const __nv_bfloat16* __restrict__ q,      // [T, H, D]
               const int* __restrict__ positions,        // [T]
               const float* __restrict__ cos_sin_cache,  // [P, D]: cos in [0, D/2), sin in [D/2, D)
               __nv_bfloat16* __restrict__ q_rot,        // [T, H, D]
               int T, int H, int D) {
  const int half = D / 2;
  const long long pair = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // (t*H + h)*half + i
  if (pair >= static_cast<long long>(T) * H * half) return;
  const int i = static_cast<int>(pair % half);
  const long long head = pair / half;  // t*H + h
  const int t = static_cast<int>(head / H);

  const float* cs = cos_sin_cache + static_cast<long long>(positions[t]) * D;
  const float c = cs[i], s = cs[half + i];
  const long long base = head * D;
  const float x1 = __bfloat162float(q[base + i]);
  const float x2 = __bfloat162float(q[base + half + i]);
  q_rot[base + i] = __float2bfloat16(x1 * c - x2 * s);
  q_rot[base + half + i] = __float2bfloat16(x2 * c + x1 * s);
}
