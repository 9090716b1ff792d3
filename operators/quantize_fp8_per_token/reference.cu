/* forgek
{
  "name": "quantize_fp8_row_in_registers",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "params": {"ITEMS": 2},
  "let": {"threads": "32*ceil_div(ceil_div(N/16, ITEMS), 32)"},
  "constraints": ["N % 16 == 0", "threads <= 512"],
  "launches": [
    {"kernel": "quantize_fp8_per_token_reference", "grid": ["M"], "block": ["threads"],
     "args": ["x", "q", "scales", "M", "N"]}
  ]
}
*/
// Expert per-token fp8 quantisation: one pass over DRAM (2 bytes read, 1 byte written per element).
//
// One CTA per row. The unit of work is a group of 16 elements: 32 bytes of x (two 16-byte loads)
// become 16 bytes of q (one 16-byte store), so loads and stores are both full vectors. Thread t
// holds groups t, t+T, ..., t+(ITEMS-1)*T of the row in registers (T = blockDim.x, sized so that
// T*ITEMS*16 >= N: 128 threads at N = 4096, 8 KiB of loads in flight per CTA).
//   amax  = CTA max of |x|                 (warp shuffles, then one value per warp in smem)
//   scale = max(amax / 448, 1/(448*512));  q = e4m3_satfinite(x * (1 / scale))
// Two floats become two e4m3 in one cvt.rn.satfinite.e4m3x2.f32. x is read with evict-first
// loads, q written with streaming stores.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/fp8.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kMaxThreads = 512;
constexpr float kFp8Max = 448.f;
constexpr float kMinScale = 1.f / (448.f * 512.f);

extern "C" __global__ void __launch_bounds__(kMaxThreads)
quantize_fp8_per_token_reference(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                 __nv_fp8_e4m3* __restrict__ q,        // [M, N]
                                 float* __restrict__ scales,           // [M]
                                 int M, int N) {
  __shared__ float warp_amax[kMaxThreads / kWarp];
  const int row = blockIdx.x;
  if (row >= M) return;  // the whole CTA leaves together
  const int tid = threadIdx.x, threads = blockDim.x;
  const int groups = N / 16;  // 16-element groups per row
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);  // 2 per group
  uint4* qrow = reinterpret_cast<uint4*>(q + static_cast<size_t>(row) * N);               // 1 per group

  uint4 v[ITEMS][2];  // [ITEMS] groups x 2 vectors of 8 bf16; padding is zero (|0| adds nothing)
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * threads + tid;
    v[i][0] = g < groups ? __ldcs(xrow + 2 * g) : make_uint4(0, 0, 0, 0);
    v[i][1] = g < groups ? __ldcs(xrow + 2 * g + 1) : make_uint4(0, 0, 0, 0);
  }

  float amax = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) amax = fmaxf(amax, fmaxf(fk::absmax_bf16x8(v[i][0]), fk::absmax_bf16x8(v[i][1])));
  amax = fk::warp_max(amax);
  if (tid % kWarp == 0) warp_amax[tid / kWarp] = amax;
  __syncthreads();
  amax = 0.f;
  for (int w = 0; w < threads / kWarp; ++w) amax = fmaxf(amax, warp_amax[w]);  // a max is order-free

  const float scale = fmaxf(amax / kFp8Max, kMinScale);
  const float inv_scale = 1.f / scale;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * threads + tid;
    if (g < groups) {
      const uint2 lo = fk::quantize_e4m3x8(v[i][0], inv_scale), hi = fk::quantize_e4m3x8(v[i][1], inv_scale);
      __stcs(qrow + g, make_uint4(lo.x, lo.y, hi.x, hi.y));
    }
  }
  if (tid == 0) scales[row] = scale;
}
