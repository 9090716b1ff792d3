/* forgek
{
  "name": "silu_and_mul_row_tiles_2d",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["ITEMS"], "rows_per_block": ["ROWS"],
               "cache_hint": ["LOAD_HINT"]},
  "params": {"THREADS": [128, 256, 64, 512], "ITEMS": [1, 2, 4], "ROWS": [1, 2, 4], "LOAD_HINT": [1, 0]},
  "let": {"row_vecs": "N/8", "cta_cols": "THREADS*ITEMS"},
  "constraints": ["N % 8 == 0", "ROWS*ITEMS <= 8", "ceil_div(M, ROWS) <= 65535"],
  "launches": [
    {"kernel": "silu_and_mul_row_tiles_2d",
     "grid": ["ceil_div(row_vecs, cta_cols)", "ceil_div(M, ROWS)"], "block": ["THREADS"],
     "args": ["x", "out", "M", "N"]}
  ]
}
*/
// SwiGLU out[m, n] = silu(x[m, n]) * x[m, N + n] on a 2-D grid of (column chunk, row group) tiles.
//
//   x    [M, 2N] bf16: gate | up        out [M, N] bf16, both viewed as 16-byte vectors (8 bf16)
//   CTA (bx, by) -> rows [by*ROWS, by*ROWS + ROWS) x output vectors [bx*THREADS*ITEMS, +THREADS*ITEMS)
//   thread t     -> columns c = bx*THREADS*ITEMS + t + i*THREADS (i < ITEMS) of each of the ROWS rows:
//                   2*ROWS*ITEMS 16-byte loads (gate and up), all issued before any math.
// Unlike the flat design there is no division to find the row (the row is blockIdx.y), and the
// tile shape is free: on decode-sized inputs (few rows) ROWS = 1 with small CTAs spreads the
// work over many CTAs (M * N/8/(THREADS*ITEMS): 448 CTAs at M = 32, THREADS = 128), every thread's
// loads in flight at once; on large inputs ROWS > 1 gives each thread more bytes in flight.
// Columns and rows past the end are skipped (N/8 need not divide by THREADS*ITEMS).
// Streaming stores: out is never read back.
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

// x is read once: LOAD_HINT 1 evict-first, 0 the read-only path without L1 allocation.
constexpr fk::LoadHint kLoad = LOAD_HINT ? fk::LoadHint::cs : fk::LoadHint::nc_na;

// silu(gate) * up for 8 bf16 pairs, in fp32, rounded to bf16 once.
__device__ __forceinline__ uint4 silu_mul_vector(const uint4& gate, const uint4& up) {
  float a[8], b[8];
  fk::unpack_bf16x8(gate, a);
  fk::unpack_bf16x8(up, b);
#pragma unroll
  for (int k = 0; k < 8; ++k) a[k] = __fdividef(a[k], 1.f + __expf(-a[k])) * b[k];
  return fk::pack_bf16x8(a);
}

extern "C" __global__ void __launch_bounds__(THREADS)
silu_and_mul_row_tiles_2d(const __nv_bfloat16* __restrict__ x,  // [M, 2N]: gate | up
                          __nv_bfloat16* __restrict__ out,      // [M, N]
                          int M, int N) {
  const int row_vecs = N / 8;  // N % 8 == 0 (a manifest constraint)
  const int col0 = blockIdx.x * (THREADS * ITEMS) + threadIdx.x;
  const int row0 = blockIdx.y * ROWS;
  const uint4* x4 = reinterpret_cast<const uint4*>(x);
  uint4* out4 = reinterpret_cast<uint4*>(out);

  uint4 gate[ROWS][ITEMS], up[ROWS][ITEMS];  // [ROWS][ITEMS] vector pairs in flight per thread
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const uint4* xrow = x4 + static_cast<size_t>(row0 + r) * 2 * row_vecs;  // gate vectors; up at +row_vecs
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int c = col0 + i * THREADS;
      if (row0 + r < M && c < row_vecs) {
        gate[r][i] = fk::load<kLoad>(xrow + c);
        up[r][i] = fk::load<kLoad>(xrow + row_vecs + c);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    uint4* orow = out4 + static_cast<size_t>(row0 + r) * row_vecs;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int c = col0 + i * THREADS;
      if (row0 + r < M && c < row_vecs) fk::st_global_cs(orow + c, silu_mul_vector(gate[r][i], up[r][i]));
    }
  }
}
