/* forgek
{ "name": "scale_seed",
  "params": {"THREADS": 128},
  "launches": [ {"kernel": "scale_seed", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void scale_seed(const float* x, float* y, float alpha, int n) {
  int i = blockIdx.x * THREADS + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}
