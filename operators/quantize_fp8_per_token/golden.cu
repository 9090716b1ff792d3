/* forgek
{
  "name": "quantize_fp8_per_token_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "quantize_fp8_per_token_golden", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "q", "scales", "M", "N"]}
  ]
}
*/
// The truth for quantize_fp8_per_token: one CTA per row.
//   amax      = max |x|                              (exact: a max never rounds)
//   scales[i] = max(amax / 448, 1 / (448 * 512))      rounded once to fp32
//   q         = clamp(x / scales[i], -448, 448)       in fp64, written as fp32 BEFORE the e4m3
//                                                      rounding (the candidate's rounding is what
//                                                      the tolerance covers)
// q is divided by the fp32 scale actually stored, so q * scales reproduces x.
#include <cuda_bf16.h>

__device__ float block_max(float value) {
  __shared__ float partial[THREADS];  // [THREADS] one value per thread, halved each step (THREADS = 2^k)
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  return partial[0];  // called once per CTA
}

extern "C" __global__ void __launch_bounds__(THREADS)
quantize_fp8_per_token_golden(const __nv_bfloat16* __restrict__ x,  // [M, N]
                              float* __restrict__ q,                // [M, N], fp32 truth (unrounded)
                              float* __restrict__ scales,           // [M]
                              int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const __nv_bfloat16* xrow = x + static_cast<size_t>(row) * N;
  float* qrow = q + static_cast<size_t>(row) * N;

  float local = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) local = fmaxf(local, fabsf(__bfloat162float(xrow[j])));
  const double amax = block_max(local);
  const float scale = static_cast<float>(fmax(amax / 448.0, 1.0 / (448.0 * 512.0)));

  for (int j = threadIdx.x; j < N; j += THREADS) {
    const double v = static_cast<double>(__bfloat162float(xrow[j])) / static_cast<double>(scale);
    qrow[j] = static_cast<float>(fmin(fmax(v, -448.0), 448.0));
  }
  if (threadIdx.x == 0) scales[row] = scale;
}
