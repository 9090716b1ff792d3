/* forgek
{
  "name": "transpose_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "transpose_bf16_golden", "grid": ["ceil_div(M*N, THREADS)"], "block": ["THREADS"],
     "args": ["in", "out", "M", "N"]}
  ]
}
*/
// The truth for transpose_bf16: one thread per element, out[j, i] = in[i, j], written as fp32
// (exact: every bf16 value is an fp32 value).
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
transpose_bf16_golden(const __nv_bfloat16* __restrict__ in,  // [M, N]
                      float* __restrict__ out,               // [N, M], fp32 truth
                      int M, int N) {
  const long long e = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // i*N + j
  if (e >= static_cast<long long>(M) * N) return;
  const long long i = e / N, j = e % N;
  out[j * M + i] = __bfloat162float(in[e]);
}
