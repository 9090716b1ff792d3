/* forgek
{
  "name": "split_kv_combine_fk",
  "launches": [
    {"kernel": "split_kv_combine_fk", "grid": ["R"], "block": ["C"], "smem": "4*N*C + 4*N",
     "args": ["pages", "cache", "po", "lse", "gathered", "comb", "comb_l2", "lse_out", "N", "C", "PAGE", "HEADS", "P"]}
  ]
}
*/
// One block per row r, one thread per column c: the paged gather through fk::paged_row, and the
// state combines of fk::lse2_combine / fk::lse2_union from shared memory (generic loads, strides
// C and 1) and from global memory (ThroughL2).
#include <cuda_bf16.h>
#include <forgek/split_kv.cuh>

extern "C" __global__ void split_kv_combine_fk(const int* pages, const __nv_bfloat16* cache, const float* po,
                                               const float* lse, float* gathered, float* comb, float* comb_l2,
                                               float* lse_out, int N, int C, int PAGE, int HEADS, int P)
{
  extern __shared__ float s[];  // [N][C] states, then [N] lse
  float* const s_lse = s + N * C;
  const int r = blockIdx.x, c = threadIdx.x;
  const int* const row_pages = pages + r * P;
  for (int t = 0; t < P * PAGE; ++t)
    gathered[((size_t)r * P * PAGE + t) * C + c] =
        __bfloat162float(cache[fk::paged_row(row_pages, t, PAGE, HEADS, r % HEADS, C) + c]);

  for (int i = 0; i < N; ++i) s[i * C + c] = po[((size_t)r * N + i) * C + c];
  if (c < N) s_lse[c] = lse[r * N + c];
  __syncthreads();
  comb[r * C + c] = fk::lse2_combine(s + c, C, s_lse, 1, N);
  comb_l2[r * C + c] = fk::lse2_combine<true>(po + (size_t)r * N * C + c, C, lse + r * N, 1, N);
  if (c == 0) lse_out[2 * r] = fk::lse2_union(s_lse, 1, N);
  if (c == 1) lse_out[2 * r + 1] = fk::lse2_union<true>(lse + r * N, 1, N);
}
