/* forgek
{
  "name": "planted_half_output",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: correct rows, but only the first half of them. Expected
// outcome: wrong (the unwritten half keeps the NaN poison).
__device__ float block_reduce(float v, bool take_max) {
  __shared__ float partial[256];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int w = 128; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      float o = partial[threadIdx.x + w];
      partial[threadIdx.x] = take_max ? fmaxf(partial[threadIdx.x], o) : partial[threadIdx.x] + o;
    }
    __syncthreads();
  }
  float r = partial[0];
  __syncthreads();
  return r;
}

__device__ void softmax_row(const float* xrow, float* yrow, int N) {
  float m = -__int_as_float(0x7f800000);
  for (int j = threadIdx.x; j < N; j += 256) m = fmaxf(m, xrow[j]);
  m = block_reduce(m, true);
  float s = 0;
  for (int j = threadIdx.x; j < N; j += 256) s += expf(xrow[j] - m);
  s = block_reduce(s, false);
  for (int j = threadIdx.x; j < N; j += 256) yrow[j] = expf(xrow[j] - m) / s;
}

extern "C" __global__ void __launch_bounds__(256) planted(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  if (blockIdx.x >= M / 2) return;
  softmax_row(x + size_t(blockIdx.x) * N, y + size_t(blockIdx.x) * N, N);
}
