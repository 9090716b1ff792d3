/* forgek
{
  "name": "activation_gelu_fk",
  "launches": [
    {"kernel": "activation_gelu_fk", "grid": ["ceil_div(N, 256)"], "block": [256],
     "args": ["x", "ya", "ys", "N"]}
  ]
}
*/
// One element per thread: both GELU forms of forgek/activation.cuh.
#include <forgek/activation.cuh>

extern "C" __global__ void __launch_bounds__(256) activation_gelu_fk(const float* x, float* ya, float* ys, int N)
{
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= N) return;
  ya[i] = fk::gelu_tanh_approx(x[i]);
  ys[i] = fk::gelu_tanh_sigmoid(x[i]);
}
