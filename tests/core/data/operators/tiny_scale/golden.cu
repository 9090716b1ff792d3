/* forgek
{ "name": "scale_golden",
  "launches": [ {"kernel": "scale_golden", "grid": ["ceil_div(N, 256)"], "block": [256],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void scale_golden(const float* x, float* y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}
