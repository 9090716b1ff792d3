/* forgek
{
  "name": "gemv_bf16_seed",
  "mechanisms": ["vector_16B"],
  "params": {"KSPLIT": 8},
  "constraints": ["N % 256 == 0"],
  "launches": [
    {"kernel": "gemv_split_k", "grid": ["N / 256"], "block": [32, "KSPLIT"], "smem": "KSPLIT*256*4",
     "args": ["x", "W", "y", "K", "N"]}
  ]
}
*/
// Seed for gemv_bf16: y[n] = sum_k x[k] * W[k, n]. A block owns 256 output columns: lane tx of the
// 32 threads of a row of the block reads 8 neighbouring columns with one 16-byte load, and the
// KSPLIT rows of the block split K (row ty takes k = ty, ty + KSPLIT, ...), so a warp reads 512
// contiguous bytes of one row of W per step. The KSPLIT partial sums of each column meet in shared
// memory. Plain on purpose: one k per step (little memory-level parallelism per thread), only
// N/256 = 112 blocks for 132 SMs, no split of K across blocks.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(32 * KSPLIT)
gemv_split_k(const __nv_bfloat16* __restrict__ x,  // [1, K]
             const __nv_bfloat16* __restrict__ W,  // [K, N] row-major
             __nv_bfloat16* __restrict__ y,        // [1, N]
             int K, int N)
{
  extern __shared__ float partial[];  // [KSPLIT][256]: partial[ty][8*tx + j]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int n0 = blockIdx.x * 256 + tx * 8;  // this thread's 8 columns

  float acc[8] = {};
  for (int k = ty; k < K; k += KSPLIT) {
    const float xk = __bfloat162float(x[k]);
    const uint4 raw = *reinterpret_cast<const uint4*>(W + (size_t)k * N + n0);  // 8 bf16
    const __nv_bfloat162* w2 = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 wf = __bfloat1622float2(w2[j]);
      acc[2 * j] = fmaf(xk, wf.x, acc[2 * j]);
      acc[2 * j + 1] = fmaf(xk, wf.y, acc[2 * j + 1]);
    }
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) partial[ty * 256 + tx * 8 + j] = acc[j];
  __syncthreads();

  // 256 columns, 32*KSPLIT threads: each thread sums the KSPLIT partials of its columns.
  for (int c = ty * 32 + tx; c < 256; c += 32 * KSPLIT) {
    float sum = 0.0f;
    for (int s = 0; s < KSPLIT; ++s) sum += partial[s * 256 + c];
    y[blockIdx.x * 256 + c] = __float2bfloat16(sum);
  }
}
