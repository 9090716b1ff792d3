/* forgek
{
  "name": "softmax_row_per_warp",
  "mechanisms": ["warp_shuffle_reduction", "vector_16B", "register_row_cache", "online_softmax",
                 "streaming_store"],
  "controls": {"vector_16B": ["VEC"], "register_row_cache": ["MAX_ITEMS"], "rows_per_block": ["ROWS_PER_BLOCK"]},
  "params": {"ROWS_PER_BLOCK": [1, 2, 4, 8], "VEC": [1, 2, 4], "MAX_ITEMS": [1, 2, 4, 8, 16, 32]},
  "let": {"cached_floats_per_lane": "VEC*MAX_ITEMS"},
  "constraints": ["N % VEC == 0", "cached_floats_per_lane <= 64"],
  "launches": [
    {"kernel": "softmax_row_per_warp",
     "grid": ["ceil_div(M, ROWS_PER_BLOCK)"], "block": ["32*ROWS_PER_BLOCK"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Softmax over the last axis of an fp32 [M, N] row-major matrix, one warp per row.
// A CTA holds ROWS_PER_BLOCK warps = ROWS_PER_BLOCK rows. Each lane moves VEC consecutive floats
// per access (VEC = 4: 16-byte accesses, 512 contiguous bytes per warp instruction).
//   N <= 32*VEC*MAX_ITEMS  register path: the row is read once into registers ([MAX_ITEMS] packs
//                          per lane), max and sum by warp shuffles, y written from registers:
//                          8 bytes of DRAM traffic per element.
//   longer rows            streaming path: one online-softmax pass over x (running max and sum),
//                          then a second pass re-reads x (mostly from L2) and writes y.
// No CTA-wide barrier: warps are independent, so a partial last CTA just lets its extra warps exit.
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// VEC consecutive floats of a row, moved as one VEC*4-byte access.
using Pack = fk::FloatPack<VEC>;
// Last read of x by this kernel: evict-first, so it does not push still-needed rows out of L2.
constexpr fk::LoadHint kLastRead = fk::LoadHint::cs;
// y is never read again by this kernel: streaming stores.
constexpr fk::StoreHint kStoreY = fk::StoreHint::cs;

// The online-softmax state of a set of values: their max and the sum of exp(value - max).
using RowStat = fk::SoftmaxState;

// Lane l holds packs l, l+32, ..., l+32*(MAX_ITEMS-1) of the row ([MAX_ITEMS] x [VEC] floats).
__device__ __forceinline__ void softmax_row_in_registers(const float* __restrict__ xrow,
                                                         float* __restrict__ yrow, int npacks, int lane) {
  Pack cache[MAX_ITEMS];
  float m = fk::neg_inf();
#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    const int idx = i * kWarp + lane;
#pragma unroll
    for (int j = 0; j < VEC; ++j) cache[i].v[j] = fk::neg_inf();
    if (idx < npacks) cache[i] = fk::load_floats<VEC>(xrow + idx * VEC);
#pragma unroll
    for (int j = 0; j < VEC; ++j) m = fmaxf(m, cache[i].v[j]);
  }
  m = fk::warp_max(m);

  // One exp per element: exp(x - row max) replaces x in place and feeds the sum.
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    if (i * kWarp + lane < npacks) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        cache[i].v[j] = __expf(cache[i].v[j] - m);
        sum += cache[i].v[j];
      }
    }
  }
  const float inv_sum = 1.f / fk::warp_sum(sum);

#pragma unroll
  for (int i = 0; i < MAX_ITEMS; ++i) {
    const int idx = i * kWarp + lane;
    if (idx < npacks) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) cache[i].v[j] *= inv_sum;
      fk::store_floats<kStoreY>(yrow + idx * VEC, cache[i]);
    }
  }
}

// Rows longer than the register cache: pass 1 keeps a running (max, sum) per lane, pass 2
// re-reads x. Two reads of x, but the second one mostly hits L2 (the row was just read).
__device__ __forceinline__ void softmax_row_streaming(const float* __restrict__ xrow,
                                                      float* __restrict__ yrow, int npacks, int lane) {
  RowStat s{fk::neg_inf(), 0.f};
#pragma unroll 4
  for (int idx = lane; idx < npacks; idx += kWarp) s = fk::softmax_absorb(s, fk::load_floats<VEC>(xrow + idx * VEC).v);
  s = fk::warp_softmax_merge(s);

  const float inv_sum = 1.f / s.sum;
#pragma unroll 4
  for (int idx = lane; idx < npacks; idx += kWarp) {
    Pack p = fk::load_floats<VEC, kLastRead>(xrow + idx * VEC);
#pragma unroll
    for (int j = 0; j < VEC; ++j) p.v[j] = __expf(p.v[j] - s.max) * inv_sum;
    fk::store_floats<kStoreY>(yrow + idx * VEC, p);
  }
}

extern "C" __global__ void __launch_bounds__(kWarp * ROWS_PER_BLOCK)
softmax_row_per_warp(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const int lane = threadIdx.x % kWarp;
  const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / kWarp;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;
  const int npacks = N / VEC;  // N % VEC == 0 (a manifest constraint) keeps every pack aligned
  if (npacks <= kWarp * MAX_ITEMS)
    softmax_row_in_registers(xrow, yrow, npacks, lane);
  else
    softmax_row_streaming(xrow, yrow, npacks, lane);
}
