/* forgek
{
  "name": "fused_add_rmsnorm_row_in_registers",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "params": {"ITEMS": 4},
  "let": {"threads": "32*ceil_div(ceil_div(N/8, ITEMS), 32)"},
  "constraints": ["N % 8 == 0", "threads <= 512"],
  "launches": [
    {"kernel": "fused_add_rmsnorm_bf16_reference", "grid": ["M"], "block": ["threads"],
     "args": ["x", "residual", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// Expert fused residual-add + RMSNorm over the rows of bf16 [M, N] matrices: one pass over DRAM
// (read x, read residual, write residual, write y: 8 bytes per element, the floor).
//
// One CTA per row; thread t owns 16-byte vectors t, t+T, ..., t+(ITEMS-1)*T of the row
// (T = blockDim.x, sized by the manifest so that T*ITEMS*8 >= N; 128 threads at N = 4096).
//   1. load every x and residual vector of the thread (2*ITEMS loads in flight),
//   2. r = x + residual in fp32, kept in registers ([ITEMS][8] floats); bf16(r) is stored back
//      to residual at once, so those writes drain while the CTA reduces,
//   3. rstd = rsqrt(CTA sum of r^2 / N + eps)  (warp shuffles, then one value per warp in smem),
//   4. y = r * rstd * w from the fp32 r (flashinfer's rounding), 16-byte streaming stores.
// w (shared by every row, L2-resident) is loaded only after the reduction through the read-only
// path, so it does not hold registers across the barrier.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kMaxThreads = 512;

extern "C" __global__ void __launch_bounds__(kMaxThreads)
fused_add_rmsnorm_bf16_reference(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                 __nv_bfloat16* __restrict__ residual, // [M, N], updated in place
                                 const __nv_bfloat16* __restrict__ w,  // [N]
                                 __nv_bfloat16* __restrict__ y,        // [M, N]
                                 int M, int N, float eps) {
  __shared__ float sq_partial[kMaxThreads / kWarp];
  const int row = blockIdx.x;
  if (row >= M) return;  // the whole CTA leaves together
  const int tid = threadIdx.x, threads = blockDim.x;
  const int nvec = N / 8;  // 16-byte vectors per row
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);
  uint4* rrow = reinterpret_cast<uint4*>(residual + static_cast<size_t>(row) * N);
  uint4* yrow = reinterpret_cast<uint4*>(y + static_cast<size_t>(row) * N);

  uint4 xv[ITEMS], rv[ITEMS];  // [ITEMS] x 8 bf16 each; padding is zero
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * threads + tid;
    xv[i] = idx < nvec ? __ldcs(xrow + idx) : make_uint4(0, 0, 0, 0);
    rv[i] = idx < nvec ? __ldcs(rrow + idx) : make_uint4(0, 0, 0, 0);
  }

  float r[ITEMS][8];  // the fp32 sums, normalised below
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float a[8];
    fk::unpack_bf16x8(xv[i], r[i]);
    fk::unpack_bf16x8(rv[i], a);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      r[i][k] += a[k];
      sq = fmaf(r[i][k], r[i][k], sq);
    }
    const int idx = i * threads + tid;
    if (idx < nvec) __stcs(rrow + idx, fk::pack_bf16x8(r[i]));
  }
  const float rstd = rsqrtf(fk::block_sum(sq, sq_partial) / N + eps);

  const uint4* w4 = reinterpret_cast<const uint4*>(w);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * threads + tid;
    if (idx < nvec) {
      float g[8];
      fk::unpack_bf16x8(__ldg(w4 + idx), g);
#pragma unroll
      for (int k = 0; k < 8; ++k) r[i][k] = r[i][k] * rstd * g[k];
      __stcs(yrow + idx, fk::pack_bf16x8(r[i]));
    }
  }
}
