/* forgek
{
  "name": "silu_and_mul_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "silu_and_mul_bf16_golden", "grid": ["ceil_div(M*N, THREADS)"], "block": ["THREADS"],
     "args": ["x", "out", "M", "N"]}
  ]
}
*/
// The truth for silu_and_mul_bf16: one thread per output element, in fp64, written as fp32.
//   a = x[m, n] (gate), b = x[m, N + n] (up), out[m, n] = a / (1 + exp(-a)) * b
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
silu_and_mul_bf16_golden(const __nv_bfloat16* __restrict__ x,  // [M, 2N]
                         float* __restrict__ out,              // [M, N], fp32 truth
                         int M, int N) {
  const long long e = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // m*N + n
  if (e >= static_cast<long long>(M) * N) return;
  const long long m = e / N, n = e % N;
  const double a = __bfloat162float(x[m * 2 * N + n]);
  const double b = __bfloat162float(x[m * 2 * N + N + n]);
  out[e] = static_cast<float>(a / (1.0 + exp(-a)) * b);
}
