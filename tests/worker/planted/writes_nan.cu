/* forgek
{
  "name": "planted_writes_nan",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: correct everywhere except one NaN. Expected outcome: wrong
// (NaN never passes, whatever the tolerance).
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
  softmax_row(x + size_t(blockIdx.x) * N, y + size_t(blockIdx.x) * N, N);
  if (blockIdx.x == M - 1 && threadIdx.x == 0) y[size_t(M) * N - 1] = __int_as_float(0x7fc00000);
}
