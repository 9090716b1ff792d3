/* forgek
{
  "name": "rmsnorm_row_in_registers",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "params": {"ITEMS": 4},
  "let": {"threads": "32*ceil_div(ceil_div(N/8, ITEMS), 32)"},
  "constraints": ["N % 8 == 0", "threads <= 512"],
  "launches": [
    {"kernel": "rmsnorm_bf16_reference", "grid": ["M"], "block": ["threads"], "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// Expert RMSNorm over the rows of a bf16 [M, N] matrix: one pass over DRAM.
//
// One CTA per row. The row is read once with 16-byte loads (8 bf16 each) and stays in registers:
// thread t holds vectors t, t+T, ..., t+(ITEMS-1)*T of the row (T = blockDim.x; each warp-wide
// load is 512 contiguous bytes). The manifest sizes T so that T*ITEMS*8 >= N:
//   N = 4096: 128 threads, 8 KiB of loads in flight per CTA, many CTAs per SM hide DRAM latency.
//   N = 8192: 256 threads; at M = 128 the grid is one CTA per SM and the time is one DRAM round
//             trip plus one reduction, so every load of the row is issued before any arithmetic.
//   rstd = rsqrt(CTA sum of x^2 / N + eps)   (warp shuffles, then one value per warp in smem)
//   y    = x * rstd * w, written with 16-byte streaming stores.
// w (shared by every row, L2-resident) is loaded only after the reduction, through the
// read-only path, so it does not hold 16 registers across the barrier.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kMaxThreads = 512;

extern "C" __global__ void __launch_bounds__(kMaxThreads)
rmsnorm_bf16_reference(const __nv_bfloat16* __restrict__ x,  // [M, N]
                       const __nv_bfloat16* __restrict__ w,  // [N]
                       __nv_bfloat16* __restrict__ y,        // [M, N]
                       int M, int N, float eps) {
  __shared__ float sq_partial[kMaxThreads / kWarp];
  const int row = blockIdx.x;
  if (row >= M) return;  // the whole CTA leaves together
  const int tid = threadIdx.x, threads = blockDim.x;
  const int nvec = N / 8;  // 16-byte vectors per row
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);
  uint4* yrow = reinterpret_cast<uint4*>(y + static_cast<size_t>(row) * N);

  uint4 v[ITEMS];  // [ITEMS] x 8 bf16 of this thread's share of the row; padding is zero
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * threads + tid;
    v[i] = idx < nvec ? __ldcs(xrow + idx) : make_uint4(0, 0, 0, 0);
  }

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[8];
    fk::unpack_bf16x8(v[i], f);
#pragma unroll
    for (int k = 0; k < 8; ++k) sq = fmaf(f[k], f[k], sq);
  }
  const float rstd = rsqrtf(fk::block_sum(sq, sq_partial) / N + eps);

  const uint4* w4 = reinterpret_cast<const uint4*>(w);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * threads + tid;
    if (idx < nvec) {
      float f[8], g[8];
      fk::unpack_bf16x8(v[i], f);
      fk::unpack_bf16x8(__ldg(w4 + idx), g);
#pragma unroll
      for (int k = 0; k < 8; ++k) f[k] = f[k] * rstd * g[k];
      __stcs(yrow + idx, fk::pack_bf16x8(f));
    }
  }
}
