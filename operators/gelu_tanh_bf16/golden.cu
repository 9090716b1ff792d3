/* forgek
{
  "name": "gelu_tanh_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "gelu_tanh_bf16_golden", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"], "args": ["x", "y", "N"]}
  ]
}
*/
// The truth for gelu_tanh_bf16: one thread per element, the textbook formula in fp64, y as fp32.
//   y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
gelu_tanh_bf16_golden(const __nv_bfloat16* __restrict__ x,  // [N]
                      float* __restrict__ y,                // [N], fp32 truth
                      int N) {
  const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (i >= N) return;
  const double v = __bfloat162float(x[i]);
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  y[i] = static_cast<float>(0.5 * v * (1.0 + tanh(k * (v + 0.044715 * v * v * v))));
}
