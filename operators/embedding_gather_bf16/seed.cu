/* forgek
{
  "name": "embedding_gather_thread_per_element",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "embedding_gather_bf16_seed", "grid": ["ceil_div(T*D, THREADS)"], "block": ["THREADS"],
     "args": ["ids", "table", "out", "T", "D"]}
  ]
}
*/
// A plain starting point: one thread per output element, 2-byte copies, a 64-bit division per
// element and ids[i] re-read by every thread of the row. Correct for any shape; left slow on
// purpose.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
embedding_gather_bf16_seed(const int* __restrict__ ids,             // [T], in [0, V)
                           const __nv_bfloat16* __restrict__ table, // [V, D]
                           __nv_bfloat16* __restrict__ out,         // [T, D]
                           int T, int D) {
  const long long e = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // i*D + j
  if (e >= static_cast<long long>(T) * D) return;
  const long long i = e / D, j = e % D;
  out[e] = table[static_cast<long long>(ids[i]) * D + j];
}
