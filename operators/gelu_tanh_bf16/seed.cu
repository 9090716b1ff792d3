/* forgek
{
  "name": "gelu_tanh_thread_per_element",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "gelu_tanh_bf16_seed", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"], "args": ["x", "y", "N"]}
  ]
}
*/
// A plain starting point: one thread per element, 2-byte loads and stores, accurate tanhf.
// Correct for any N; left slow on purpose (2-byte accesses, a full-precision tanh).
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
gelu_tanh_bf16_seed(const __nv_bfloat16* __restrict__ x,  // [N]
                    __nv_bfloat16* __restrict__ y,        // [N]
                    int N) {
  const int i = blockIdx.x * THREADS + threadIdx.x;
  if (i >= N) return;
  const float v = __bfloat162float(x[i]);
  const float k = 0.7978845608f;  // sqrt(2 / pi)
  y[i] = __float2bfloat16(0.5f * v * (1.f + tanhf(k * (v + 0.044715f * v * v * v))));
}
