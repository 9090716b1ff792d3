/* forgek
{
  "name": "rope_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "rope_bf16_golden", "grid": ["ceil_div(T*H*(D/2), THREADS)"], "block": ["THREADS"],
     "args": ["q", "positions", "cos_sin_cache", "q_rot", "T", "H", "D"]}
  ]
}
*/
// The truth for rope_bf16 (NeoX style): one thread per rotated pair (t, h, i), i < D/2, in fp64.
//   c = cache[p, i], s = cache[p, D/2 + i], p = positions[t]
//   q_rot[t,h,i]       = q[t,h,i] * c - q[t,h,D/2+i] * s
//   q_rot[t,h,D/2+i]   = q[t,h,D/2+i] * c + q[t,h,i] * s
// Both outputs written as fp32.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
rope_bf16_golden(const __nv_bfloat16* __restrict__ q,      // [T, H, D]
                 const int* __restrict__ positions,        // [T], in [0, P)
                 const float* __restrict__ cos_sin_cache,  // [P, D]: cos in [0, D/2), sin in [D/2, D)
                 float* __restrict__ q_rot,                // [T, H, D], fp32 truth
                 int T, int H, int D) {
  const int half = D / 2;
  const long long pair = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // (t*H + h)*half + i
  if (pair >= static_cast<long long>(T) * H * half) return;
  const int i = static_cast<int>(pair % half);
  const long long head = pair / half;  // t*H + h
  const int t = static_cast<int>(head / H);

  const float* cs = cos_sin_cache + static_cast<long long>(positions[t]) * D;
  const double c = cs[i], s = cs[half + i];
  const long long base = head * D;
  const double x1 = __bfloat162float(q[base + i]);
  const double x2 = __bfloat162float(q[base + half + i]);
  q_rot[base + i] = static_cast<float>(x1 * c - x2 * s);
  q_rot[base + half + i] = static_cast<float>(x2 * c + x1 * s);
}
