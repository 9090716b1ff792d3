/* forgek
{
  "name": "quantize_fp8_row_per_cta",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "register_row_cache": ["ITEMS"], "vector_16B": ["GROUP"],
               "rows_per_block": ["ROWS"], "streaming_store": ["CACHE_HINT"]},
  "params": {"THREADS": [128, 256, 64, 512], "ITEMS": [2, 1, 4, 8], "GROUP": [16, 8], "ROWS": [1, 2, 4],
             "CACHE_HINT": [1, 0]},
  "let": {"groups": "N/GROUP", "slots": "ITEMS*THREADS"},
  "constraints": ["N % GROUP == 0", "groups <= slots", "groups > slots - THREADS", "THREADS <= groups",
                  "THREADS*ROWS <= 1024"],
  "launches": [
    {"kernel": "quantize_fp8_per_token_row_per_cta", "grid": ["ceil_div(M, ROWS)"], "block": ["THREADS*ROWS"],
     "args": ["x", "q", "scales", "M", "N"]}
  ]
}
*/
// Per-token fp8 quantisation, each row held in the registers of THREADS threads: the reference's design
// with its knobs, and ROWS rows per CTA.
//
//   CTA b          -> rows b*ROWS ... b*ROWS + ROWS-1; threads [s*THREADS, (s+1)*THREADS) own row b*ROWS + s
//   thread t       -> groups t, t+THREADS, ..., t+(ITEMS-1)*THREADS of its row; a group is GROUP elements:
//                     GROUP 16: 32 B of x (two 16-byte loads) -> 16 B of q (one 16-byte store)
//                     GROUP 8:  16 B of x (one 16-byte load)  ->  8 B of q (one 8-byte store)
//   constraints    -> the ITEMS*THREADS slots cover the row, the last item holds at least one group,
//                     and every thread owns a group
//   amax  = max |x| over the row (warp shuffles, then the row's warps through shared memory)
//   scale = max(amax / 448, 1/(448*512));  q = e4m3_satfinite(x * (1 / scale))
// ROWS > 1 shares one barrier among several rows and gives the scheduler larger CTAs; a partial last
// CTA keeps its rows past M out of memory but in the barrier.
// CACHE_HINT 1: evict-first loads of x, streaming stores of q; 0: plain accesses (measured, not assumed).
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/fp8.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kBlock = THREADS * ROWS;
constexpr int kRowWarps = THREADS / kWarp;  // warps per row
constexpr int kLoads = GROUP / 8;           // 16-byte loads of x per group
constexpr float kFp8Max = 448.f;
constexpr float kMinScale = 1.f / (448.f * 512.f);

// GROUP e4m3 bytes, stored as one access.
using Out = fk::Access<GROUP>;

// CACHE_HINT 1: x (read once) evict-first, q (never read back here) streamed; 0: plain accesses.
constexpr fk::LoadHint kLoadX = CACHE_HINT ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreQ = CACHE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(kBlock)
quantize_fp8_per_token_row_per_cta(const __nv_bfloat16* __restrict__ x,  // [M, N]
                                   __nv_fp8_e4m3* __restrict__ q,        // [M, N]
                                   float* __restrict__ scales,           // [M]
                                   int M, int N) {
  __shared__ float warp_amax[kBlock / kWarp];  // [ROWS][kRowWarps]
  const int sub = threadIdx.x / THREADS;       // this thread's row within the CTA
  const int tid = threadIdx.x % THREADS;
  const int row = blockIdx.x * ROWS + sub;
  const bool live = row < M;                   // rows past M load nothing, store nothing, still sync
  const int groups = N / GROUP;                // N % GROUP == 0 (a constraint)
  const size_t row_begin = static_cast<size_t>(live ? row : 0) * N;
  const uint4* xrow = reinterpret_cast<const uint4*>(x + row_begin);  // [groups][kLoads]
  Out* qrow = reinterpret_cast<Out*>(q + row_begin);                  // [groups]

  // Every load of the row is issued before any math.
  uint4 v[ITEMS][kLoads];  // [ITEMS] groups x kLoads vectors of 8 bf16; padding is zero (|0| adds nothing)
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * THREADS + tid;
#pragma unroll
    for (int h = 0; h < kLoads; ++h)
      v[i][h] = live && g < groups ? fk::load<kLoadX>(xrow + kLoads * g + h) : make_uint4(0, 0, 0, 0);
  }

  float amax = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
#pragma unroll
    for (int h = 0; h < kLoads; ++h) amax = fmaxf(amax, fk::absmax_bf16x8(v[i][h]));
  amax = fk::warp_max(amax);
  if (threadIdx.x % kWarp == 0) warp_amax[threadIdx.x / kWarp] = amax;
  __syncthreads();
  amax = 0.f;
#pragma unroll
  for (int w = 0; w < kRowWarps; ++w) amax = fmaxf(amax, warp_amax[sub * kRowWarps + w]);  // order-free
  if (!live) return;  // after the only barrier

  const float scale = fmaxf(amax / kFp8Max, kMinScale);
  const float inv_scale = 1.f / scale;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int g = i * THREADS + tid;
    if (g < groups) {
#if GROUP == 16
      const uint2 lo = fk::quantize_e4m3x8(v[i][0], inv_scale), hi = fk::quantize_e4m3x8(v[i][1], inv_scale);
      fk::store<kStoreQ>(qrow + g, make_uint4(lo.x, lo.y, hi.x, hi.y));
#else
      fk::store<kStoreQ>(qrow + g, fk::quantize_e4m3x8(v[i][0], inv_scale));
#endif
    }
  }
  if (tid == 0) scales[row] = scale;
}
