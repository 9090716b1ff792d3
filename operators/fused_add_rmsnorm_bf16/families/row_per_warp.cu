/* forgek
{
  "name": "fused_add_rmsnorm_row_per_warp",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"rows_per_block": ["ROWS"], "memory_level_parallelism": ["ITEMS"], "cache_hint": ["LOAD_CS"],
               "streaming_store": ["STORE_CS"]},
  "params": {"ROWS": [4, 8, 2, 1], "ITEMS": [16, 8], "LOAD_CS": [0, 1], "STORE_CS": [0, 1]},
  "let": {"row_capacity": "256*ITEMS"},
  "constraints": ["N % 8 == 0", "N <= row_capacity", "row_capacity <= 2*N", "ITEMS*ROWS <= 128"],
  "launches": [
    {"kernel": "fused_add_rmsnorm_bf16_row_per_warp", "grid": ["ceil_div(M, ROWS)"], "block": ["32*ROWS"],
     "args": ["x", "residual", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// Fused residual add + RMSNorm of bf16 rows, one warp per row: no shared memory, no CTA barrier.
// Each lane issues all 2*ITEMS 16-byte loads of its share (x and residual) before any arithmetic:
// at N = 4096 one warp has the whole row, 16 KiB, in flight.
//   CTA b      -> rows b*ROWS .. b*ROWS + ROWS-1, warp j of the CTA takes row b*ROWS + j
//   lane l     -> vectors l, l+32, ..., l+32*(ITEMS-1) of the row (8 bf16 each; N <= 256*ITEMS <= 2N)
// The row is kept as the bf16 residual it stores (vLLM's rounding: y normalises bf16(x + residual),
// one bf16 rounding more than the fp32 path, within tolerance): [ITEMS] uint4 per lane instead
// of [ITEMS][8] floats, which is what lets a warp hold a 4096-wide row without spilling. The sum
// of squares is taken from the fp32 sums before rounding.
// Warps of a partial last CTA whose row is past M leave at once (no barrier to wait on).
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
// x and residual are read once here: LOAD_CS = 1 loads them evict-first (plain loads, not the
// read-only path: residual is written below); residual and y are never read back here: STORE_CS = 1
// streams them.
constexpr fk::LoadHint kLoadOnce = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreOnce = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(32 * ROWS)
fused_add_rmsnorm_bf16_row_per_warp(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                    __nv_bfloat16* __restrict__ residual, // [M, N], updated in place
                                    const __nv_bfloat16* __restrict__ w,  // [N]
                                    __nv_bfloat16* __restrict__ y,        // [M, N]
                                    int M, int N, float eps) {
  const int row = blockIdx.x * ROWS + threadIdx.x / kWarp;
  if (row >= M) return;  // the whole warp leaves together
  const int lane = threadIdx.x % kWarp;
  const int nvec = N / 8;  // 16-byte vectors per row
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);
  uint4* rrow = reinterpret_cast<uint4*>(residual + static_cast<size_t>(row) * N);
  uint4* yrow = reinterpret_cast<uint4*>(y + static_cast<size_t>(row) * N);

  uint4 xv[ITEMS], rv[ITEMS];  // [ITEMS] x 8 bf16 each; past the row: zero
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    xv[i] = make_uint4(0, 0, 0, 0);
    rv[i] = make_uint4(0, 0, 0, 0);
    if (idx < nvec) {
      xv[i] = fk::load<kLoadOnce>(xrow + idx);
      rv[i] = fk::load<kLoadOnce>(rrow + idx);
    }
  }

  // r = x + residual in fp32; rv[i] becomes bf16(r), stored to residual and kept for y.
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float r[8], a[8];
    fk::unpack_bf16x8(xv[i], r);
    fk::unpack_bf16x8(rv[i], a);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      r[k] += a[k];
      sq = fmaf(r[k], r[k], sq);
    }
    rv[i] = fk::pack_bf16x8(r);
    const int idx = i * kWarp + lane;
    if (idx < nvec) fk::store<kStoreOnce>(rrow + idx, rv[i]);
  }
  const float rstd = rsqrtf(fk::warp_sum(sq) / N + eps);

  const uint4* w4 = reinterpret_cast<const uint4*>(w);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    if (idx < nvec) {
      float r[8], g[8];
      fk::unpack_bf16x8(rv[i], r);
      fk::unpack_bf16x8(__ldg(w4 + idx), g);
#pragma unroll
      for (int k = 0; k < 8; ++k) r[k] = r[k] * rstd * g[k];
      fk::store<kStoreOnce>(yrow + idx, fk::pack_bf16x8(r));
    }
  }
}
