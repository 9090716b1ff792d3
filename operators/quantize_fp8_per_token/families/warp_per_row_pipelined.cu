/* forgek
{
  "name": "quantize_fp8_warp_per_row_pipelined",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"rows_per_block": ["WARPS"], "vector_16B": ["GROUP"], "register_row_cache": ["ITEMS"],
               "memory_level_parallelism": ["PIPELINE"], "streaming_store": ["CACHE_HINT"]},
  "params": {"WARPS": [4, 8, 2], "GROUP": [16, 8], "ITEMS": [8, 16, 4, 32], "PIPELINE": [2, 1, 4],
             "CACHE_HINT": [1, 0]},
  "let": {"groups": "N/GROUP", "slots": "32*ITEMS", "cached_bf16": "ITEMS*GROUP*(1 + (PIPELINE > 1))"},
  "constraints": ["N % GROUP == 0", "groups <= slots", "groups > slots - 32", "cached_bf16 <= 512"],
  "launches": [
    {"kernel": "quantize_fp8_per_token_warp_per_row", "grid": ["ceil_div(M, WARPS*PIPELINE)"],
     "block": ["32*WARPS"],
     "args": ["x", "q", "scales", "M", "N"]}
  ]
}
*/
// Per-token fp8 quantisation, one warp per row with no CTA barrier, each warp walking PIPELINE consecutive
// rows and issuing the next row's loads before it reduces and stores the current one.
//
//   CTA b, warp w  -> rows r0 .. r0+PIPELINE-1, r0 = (b*WARPS + w)*PIPELINE (rows past M are skipped)
//   lane l         -> groups l, l+32, ..., l+32*(ITEMS-1) of the row; a group is GROUP elements:
//                     GROUP 16: 32 B of x (two 16-byte loads) -> 16 B of q (one 16-byte store)
//                     GROUP 8:  16 B of x (one 16-byte load)  ->  8 B of q (one 8-byte store)
//   constraints    -> 32*ITEMS slots cover the row and the last item holds at least one group;
//                     with PIPELINE > 1 two rows are live in registers (cached_bf16 caps them)
//   amax  = max |x| over the row: 5 warp shuffles, no shared memory
//   scale = max(amax / 448, 1/(448*512));  q = e4m3_satfinite(x * (1 / scale))
// Why: a CTA-per-row kernel stops loading while it reduces and stores; here each warp keeps the next
// row's 32*ITEMS*GROUP*2 bytes in flight during that phase (PIPELINE 1: no prefetch, the control).
// CACHE_HINT 1: evict-first loads of x, streaming stores of q; 0: plain accesses.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/fp8.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kLoads = GROUP / 8;  // 16-byte loads of x per group
constexpr float kFp8Max = 448.f;
constexpr float kMinScale = 1.f / (448.f * 512.f);

// GROUP e4m3 bytes, stored as one access.
using Out = fk::Access<GROUP>;

// One lane's share of a row: [ITEMS] groups x [kLoads] vectors of 8 bf16.
struct RowShare {
  uint4 v[ITEMS][kLoads];
};

// CACHE_HINT 1: x (read once) evict-first, q (never read back here) streamed; 0: plain accesses.
constexpr fk::LoadHint kLoadX = CACHE_HINT ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreQ = CACHE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

// Issues every load of row `row` for this lane; groups past the row's end are zero (|0| adds nothing).
__device__ __forceinline__ void load_share(RowShare& s, const __nv_bfloat16* __restrict__ x, int row, int N,
                                           int lane) {
  const uint4* xrow = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * N);  // [groups][kLoads]
  const int groups = N / GROUP;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * kWarp + lane;
#pragma unroll
    for (int h = 0; h < kLoads; ++h)
      s.v[i][h] = g < groups ? fk::load<kLoadX>(xrow + kLoads * g + h) : make_uint4(0, 0, 0, 0);
  }
}

// Reduces the row held in `s` across the warp and writes its q and scale.
__device__ __forceinline__ void quantize_share(const RowShare& s, __nv_fp8_e4m3* __restrict__ q,
                                               float* __restrict__ scales, int row, int N, int lane) {
  float amax = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
#pragma unroll
    for (int h = 0; h < kLoads; ++h) amax = fmaxf(amax, fk::absmax_bf16x8(s.v[i][h]));
  amax = fk::warp_max(amax);
  const float scale = fmaxf(amax / kFp8Max, kMinScale);
  const float inv_scale = 1.f / scale;

  Out* qrow = reinterpret_cast<Out*>(q + static_cast<size_t>(row) * N);  // [groups]
  const int groups = N / GROUP;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * kWarp + lane;
    if (g < groups) {
#if GROUP == 16
      const uint2 lo = fk::quantize_e4m3x8(s.v[i][0], inv_scale), hi = fk::quantize_e4m3x8(s.v[i][1], inv_scale);
      fk::store<kStoreQ>(qrow + g, make_uint4(lo.x, lo.y, hi.x, hi.y));
#else
      fk::store<kStoreQ>(qrow + g, fk::quantize_e4m3x8(s.v[i][0], inv_scale));
#endif
    }
  }
  if (lane == 0) scales[row] = scale;
}

extern "C" __global__ void __launch_bounds__(kWarp * WARPS)
quantize_fp8_per_token_warp_per_row(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                    __nv_fp8_e4m3* __restrict__ q,        // [M, N]
                                    float* __restrict__ scales,           // [M]
                                    int M, int N) {
  const int lane = threadIdx.x % kWarp;
  const int first_row = (blockIdx.x * WARPS + static_cast<int>(threadIdx.x) / kWarp) * PIPELINE;
  if (first_row >= M) return;  // warps are independent: no barrier to keep

  RowShare cur;
  load_share(cur, x, first_row, N, lane);
#pragma unroll
  for (int r = 0; r < PIPELINE; ++r) {
    const int row = first_row + r;
    if (r + 1 < PIPELINE && row + 1 < M) {
      RowShare next;  // the next row's loads go out before this row's reduction and stores
      load_share(next, x, row + 1, N, lane);
      quantize_share(cur, q, scales, row, N, lane);
      cur = next;
    } else {
      quantize_share(cur, q, scales, row, N, lane);
      break;  // last row of this warp (PIPELINE reached or M)
    }
  }
}
