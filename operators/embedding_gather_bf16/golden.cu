/* forgek
{
  "name": "embedding_gather_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "embedding_gather_bf16_golden", "grid": ["ceil_div(T*D, THREADS)"], "block": ["THREADS"],
     "args": ["ids", "table", "out", "T", "D"]}
  ]
}
*/
// The truth for embedding_gather_bf16: one thread per output element, out[i, j] = table[ids[i], j],
// written as fp32 (exact: every bf16 value is an fp32 value).
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
embedding_gather_bf16_golden(const int* __restrict__ ids,             // [T], in [0, V)
                             const __nv_bfloat16* __restrict__ table, // [V, D]
                             float* __restrict__ out,                 // [T, D], fp32 truth
                             int T, int D) {
  const long long e = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // i*D + j
  if (e >= static_cast<long long>(T) * D) return;
  const long long i = e / D, j = e % D;
  out[e] = __bfloat162float(table[static_cast<long long>(ids[i]) * D + j]);
}
