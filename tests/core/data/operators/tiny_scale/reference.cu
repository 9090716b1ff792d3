/* forgek
{ "name": "scale_reference",
  "mechanisms": ["grid_stride_loop"],
  "launches": [ {"kernel": "scale_reference", "grid": ["min(ceil_div(N, 512), 1024)"], "block": [512],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void __launch_bounds__(512)
scale_reference(const float* __restrict__ x, float* __restrict__ y, float alpha, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = alpha * x[i];
}
