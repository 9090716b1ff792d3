/* forgek
{
  "name": "softmax_static_plus_48k_dynamic",
  "launches": [{"kernel": "softmax_rows", "grid": ["M"], "block": [256], "smem": "49152", "args": ["x", "y", "M", "N"]}]
}
*/
// A correct softmax_fp32 kernel whose CTA asks for exactly 48 KB of dynamic shared memory on top of
// the static shared memory of its block reductions (1 KB each). The default allowance for dynamic
// shared memory is 48 KB minus the static size, so the launcher must raise the limit for this
// kernel too, not only for dynamic sizes above 48 KB; without that the launch fails with
// CUDA_ERROR_INVALID_VALUE (a family drew such a point: cumsum_fp32, SEG=4 STAGES=3 THREADS=256).
#include <forgek/reduce.cuh>

constexpr int kThreads = 256;

extern "C" __global__ void __launch_bounds__(kThreads)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  extern __shared__ float row[];  // [N] of the 12288 floats allocated (N <= 12288)
  const float* xr = x + static_cast<size_t>(blockIdx.x) * N;
  float* yr = y + static_cast<size_t>(blockIdx.x) * N;
  float m = __int_as_float(0xff800000);  // -inf
  for (int i = threadIdx.x; i < N; i += kThreads) {
    row[i] = xr[i];
    m = fmaxf(m, row[i]);
  }
  m = fk::block_max_tree<kThreads>(m);
  float s = 0.f;
  for (int i = threadIdx.x; i < N; i += kThreads) s += __expf(row[i] - m);
  s = fk::block_sum_tree<kThreads>(s);
  const float inv = 1.f / s;
  for (int i = threadIdx.x; i < N; i += kThreads) yr[i] = __expf(row[i] - m) * inv;
}
