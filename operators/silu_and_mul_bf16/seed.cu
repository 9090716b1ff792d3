/* forgek
{
  "name": "silu_and_mul_thread_per_element",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "silu_and_mul_bf16_seed", "grid": ["ceil_div(M*N, THREADS)"], "block": ["THREADS"],
     "args": ["x", "out", "M", "N"]}
  ]
}
*/
// A plain starting point: one thread per output element, scalar 2-byte loads and stores,
// accurate expf, and a 64-bit division to find the row. Correct for any M, N; left slow on
// purpose (2-byte accesses and 64-bit index math per element).
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
silu_and_mul_bf16_seed(const __nv_bfloat16* __restrict__ x,  // [M, 2N]: gate | up
                       __nv_bfloat16* __restrict__ out,      // [M, N]
                       int M, int N) {
  const long long e = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;  // m*N + n
  if (e >= static_cast<long long>(M) * N) return;
  const long long m = e / N, n = e % N;
  const float a = __bfloat162float(x[m * 2 * N + n]);
  const float b = __bfloat162float(x[m * 2 * N + N + n]);
  out[e] = __float2bfloat16(a / (1.f + expf(-a)) * b);
}
