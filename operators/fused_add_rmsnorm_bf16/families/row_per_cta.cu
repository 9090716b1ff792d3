/* forgek
{
  "name": "fused_add_rmsnorm_row_per_cta",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "controls": {"tile": ["THREADS", "ITEMS"], "vector_16B": ["VEC"], "cache_hint": ["LOAD_CS"],
               "streaming_store": ["STORE_CS"]},
  "params": {"THREADS": [128, 256, 64, 512, 1024], "ITEMS": [4, 2, 8, 1, 16], "VEC": [8, 4],
             "LOAD_CS": [0, 1], "STORE_CS": [0, 1]},
  "let": {"row_capacity": "THREADS*ITEMS*VEC"},
  "constraints": ["N % VEC == 0", "N <= row_capacity", "row_capacity <= 2*N", "ITEMS*VEC <= 64"],
  "launches": [
    {"kernel": "fused_add_rmsnorm_bf16_row_per_cta", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "residual", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// Fused residual add + RMSNorm of bf16 rows, the reference's design with its knobs exposed: one CTA
// per row, one pass over DRAM (read x and residual, write residual and y: 8 bytes per element).
//   row r      -> CTA blockIdx.x = r
//   thread t   -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of the row, VEC bf16 each
//                 (VEC = 8: 16-byte accesses; VEC = 4: 8-byte accesses)
//   THREADS*ITEMS*VEC covers the row (N <= capacity <= 2N); vectors past the row are skipped.
//   1. every x and residual load of the thread is issued (2*ITEMS in flight),
//   2. r = x + residual in fp32, kept in registers ([ITEMS][VEC] floats); bf16(r) goes back to
//      residual at once, so those writes drain during the reduction,
//   3. rstd = rsqrt(CTA sum of r^2 / N + eps),   4. y = r * rstd * w from the fp32 r.
// LOAD_CS = 1 loads x and residual evict-first (read once); STORE_CS = 1 writes residual and y
// with streaming stores. w (L2-resident) is loaded after the reduction, through the read-only path.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// VEC consecutive bf16 moved as one access: uint4 (16 B) or uint2 (8 B).
using Access = fk::Access<2 * VEC>;
// x and residual are read once here: LOAD_CS = 1 loads them evict-first (plain loads, not the
// read-only path: residual is written below by the same thread); residual and y are never read
// back here: STORE_CS = 1 streams them.
constexpr fk::LoadHint kLoadOnce = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreOnce = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
fused_add_rmsnorm_bf16_row_per_cta(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                   __nv_bfloat16* __restrict__ residual, // [M, N], updated in place
                                   const __nv_bfloat16* __restrict__ w,  // [N]
                                   __nv_bfloat16* __restrict__ y,        // [M, N]
                                   int M, int N, float eps) {
  __shared__ float warp_partial[THREADS / kWarp];  // [THREADS/32] one sum of squares per warp
  const int row = blockIdx.x;                       // grid = M: every row is in range
  const int tid = threadIdx.x;
  const int nvec = N / VEC;  // accesses per row (N % VEC == 0)
  const Access* xrow = reinterpret_cast<const Access*>(x + static_cast<size_t>(row) * N);
  Access* rrow = reinterpret_cast<Access*>(residual + static_cast<size_t>(row) * N);
  Access* yrow = reinterpret_cast<Access*>(y + static_cast<size_t>(row) * N);

  Access xv[ITEMS], rv[ITEMS];  // [ITEMS] x VEC bf16 each; past the row: zero
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    xv[i] = Access{};
    rv[i] = Access{};
    if (idx < nvec) {
      xv[i] = fk::load<kLoadOnce>(xrow + idx);
      rv[i] = fk::load<kLoadOnce>(rrow + idx);
    }
  }

  float r[ITEMS][VEC];  // the fp32 sums x + residual, normalised below
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float a[VEC];
    fk::unpack_bf16(xv[i], r[i]);
    fk::unpack_bf16(rv[i], a);
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      r[i][k] += a[k];
      sq = fmaf(r[i][k], r[i][k], sq);
    }
    const int idx = i * THREADS + tid;
    if (idx < nvec) fk::store<kStoreOnce>(rrow + idx, fk::pack_bf16(r[i]));
  }
  const float rstd = rsqrtf(fk::block_sum(sq, warp_partial) / N + eps);

  const Access* w_vec = reinterpret_cast<const Access*>(w);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    if (idx < nvec) {
      float g[VEC];
      fk::unpack_bf16(__ldg(w_vec + idx), g);
#pragma unroll
      for (int k = 0; k < VEC; ++k) r[i][k] = r[i][k] * rstd * g[k];
      fk::store<kStoreOnce>(yrow + idx, fk::pack_bf16(r[i]));
    }
  }
}
