/* forgek
{
  "name": "planted_cached_result",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: keeps state across launches. Each row remembers the bits of
// its first and last input; when a launch sees the same values again it skips the row, leaving
// whatever the output held. Every correctness run uses a fresh seed, so it computes and passes
// there; timing launches repeat the same inputs, so it skips. Expected outcome: wrong, caught by
// the audited timed launch (outputs poisoned before, checked after).
//
// This is also the analogue of "work on another stream": device code cannot create streams, and
// a child grid launched with dynamic parallelism belongs to its parent, which completes only after
// its children, so the timing events cover that work anyway. What a kernel can do is defer or
// skip work across launches, which is exactly what this one does and what the audit catches.
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

__device__ unsigned int seen_first[65536];
__device__ unsigned int seen_last[65536];

extern "C" __global__ void __launch_bounds__(256) planted(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const float* xrow = x + size_t(blockIdx.x) * N;
  unsigned first = __float_as_uint(xrow[0]), last = __float_as_uint(xrow[N - 1]);
  bool same = blockIdx.x < 65536 && seen_first[blockIdx.x] == first && seen_last[blockIdx.x] == last;
  if (same) return;
  softmax_row(xrow, y + size_t(blockIdx.x) * N, N);
  if (threadIdx.x == 0 && blockIdx.x < 65536) {
    seen_first[blockIdx.x] = first;
    seen_last[blockIdx.x] = last;
  }
}
