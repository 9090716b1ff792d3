/* forgek
{
  "name": "split_kv_combine_golden",
  "launches": [
    {"kernel": "split_kv_combine_golden", "grid": ["R"], "block": ["C"],
     "args": ["pages", "cache", "po", "lse", "gathered", "comb", "comb_l2", "lse_out", "N", "C", "PAGE", "HEADS", "P"]}
  ]
}
*/
// The truth for the split_kv.cuh test, written without the device library: one block per row, one
// thread per column, every state read straight from global memory.
#include <cuda_bf16.h>

extern "C" __global__ void split_kv_combine_golden(const int* pages, const __nv_bfloat16* cache, const float* po,
                                                   const float* lse, float* gathered, float* comb, float* comb_l2,
                                                   float* lse_out, int N, int C, int PAGE, int HEADS, int P)
{
  const int r = blockIdx.x, c = threadIdx.x, head = r % HEADS;
  for (int t = 0; t < P * PAGE; ++t) {
    const long long page = pages[r * P + t / PAGE];
    const long long row = (page * PAGE + t % PAGE) * HEADS + head;
    gathered[((long long)r * P * PAGE + t) * C + c] = __bfloat162float(cache[row * C + c]);
  }
  float big = lse[r * N];
  for (int i = 1; i < N; ++i) big = fmaxf(big, lse[r * N + i]);
  float num = 0.0f, den = 0.0f;
  for (int i = 0; i < N; ++i) {
    const float w = exp2f(lse[r * N + i] - big);
    num += w * po[((long long)r * N + i) * C + c];
    den += w;
  }
  comb[r * C + c] = num / den;
  comb_l2[r * C + c] = num / den;
  if (c < 2) lse_out[2 * r + c] = big + log2f(den);
}
