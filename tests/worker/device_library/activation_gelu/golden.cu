/* forgek
{
  "name": "activation_gelu_golden",
  "launches": [
    {"kernel": "activation_gelu_golden", "grid": ["ceil_div(N, 256)"], "block": [256],
     "args": ["x", "ya", "ys", "N"]}
  ]
}
*/
// The truth for the activation test, written without the device library: GELU's tanh form with tanhf.
extern "C" __global__ void activation_gelu_golden(const float* x, float* ya, float* ys, int N)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float v = x[i];
  const float g = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  ya[i] = g;
  ys[i] = g;
}
