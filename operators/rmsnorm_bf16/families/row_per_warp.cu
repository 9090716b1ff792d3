/* forgek
{
  "name": "rmsnorm_row_per_warp",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"rows_per_block": ["ROWS"], "memory_level_parallelism": ["ITEMS"], "cache_hint": ["LOAD_CS"],
               "streaming_store": ["STORE_CS"]},
  "params": {"ROWS": [4, 8, 2, 16], "ITEMS": [16, 32, 8, 4], "LOAD_CS": [0, 1], "STORE_CS": [0, 1]},
  "let": {"row_capacity": "256*ITEMS"},
  "constraints": ["N % 8 == 0", "N <= row_capacity", "row_capacity <= 2*N", "ITEMS*ROWS <= 128"],
  "launches": [
    {"kernel": "rmsnorm_bf16_row_per_warp", "grid": ["ceil_div(M, ROWS)"], "block": ["32*ROWS"],
     "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// RMSNorm of bf16 rows, one warp per row: no shared memory and no CTA barrier, only shuffles.
// Each lane issues all ITEMS 16-byte loads of its share before any arithmetic, so one warp keeps
// ITEMS*512 bytes in flight (N = 4096: ITEMS = 16, the whole 8 KiB row) and the SM overlaps the
// load phase of some rows with the reduction and stores of others, warp by warp.
//   CTA b      -> rows b*ROWS .. b*ROWS + ROWS-1, warp j of the CTA takes row b*ROWS + j
//   lane l     -> vectors l, l+32, ..., l+32*(ITEMS-1) of the row (8 bf16 each; N <= 256*ITEMS <= 2N)
// Warps of a partial last CTA whose row is past M leave at once (no barrier to wait on).
// w is L2-resident and loaded after the reduction, so it does not hold registers across it.
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
// x is read once: LOAD_CS = 1 loads it evict-first; y is never read back: STORE_CS = 1 streams it.
constexpr fk::LoadHint kLoadX = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreY = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(32 * ROWS)
rmsnorm_bf16_row_per_warp(const __nv_bfloat16* __restrict__ x,  // [M, N]
                          const __nv_bfloat16* __restrict__ w,  // [N]
                          __nv_bfloat16* __restrict__ y,        // [M, N]
                          int M, int N, float eps) {
  const int row = blockIdx.x * ROWS + threadIdx.x / kWarp;
  if (row >= M) return;  // the whole warp leaves together
  const int lane = threadIdx.x % kWarp;
  const int nvec = N / 8;  // 16-byte vectors per row
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);
  uint4* yrow = reinterpret_cast<uint4*>(y + static_cast<size_t>(row) * N);

  uint4 v[ITEMS];  // [ITEMS] x 8 bf16 of the lane's share; past the row: zero
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    v[i] = make_uint4(0, 0, 0, 0);
    if (idx < nvec) v[i] = fk::load<kLoadX>(xrow + idx);
  }

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[8];
    fk::unpack_bf16x8(v[i], f);
#pragma unroll
    for (int k = 0; k < 8; ++k) sq = fmaf(f[k], f[k], sq);
  }
  const float rstd = rsqrtf(fk::warp_sum(sq) / N + eps);

  const uint4* w4 = reinterpret_cast<const uint4*>(w);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    if (idx < nvec) {
      float f[8], g[8];
      fk::unpack_bf16x8(v[i], f);
      fk::unpack_bf16x8(__ldg(w4 + idx), g);
#pragma unroll
      for (int k = 0; k < 8; ++k) f[k] = f[k] * rstd * g[k];
      fk::store<kStoreY>(yrow + idx, fk::pack_bf16x8(f));
    }
  }
}
