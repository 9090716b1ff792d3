/* forgek
{ "name": "scale_vectorised",
  "mechanisms": ["vector_16B"],
  "params": {"VEC": [4, 2, 1], "THREADS": [128, 256]},
  "let": {"per_block": "VEC * THREADS"},
  "constraints": ["N % VEC == 0"],
  "launches": [ {"kernel": "scale_vec", "grid": ["ceil_div(N, per_block)"], "block": ["THREADS"],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void __launch_bounds__(THREADS)
scale_vec(const float* __restrict__ x, float* __restrict__ y, float alpha, int n) {
  int base = (blockIdx.x * THREADS + threadIdx.x) * VEC;
  if (base >= n) return;
#pragma unroll
  for (int v = 0; v < VEC; ++v) y[base + v] = alpha * x[base + v];
}
