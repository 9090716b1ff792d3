/* forgek
{
  "name": "reduce_sum_rows_warp_rows_grid_stride",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction", "persistent_grid", "memory_level_parallelism"],
  "controls": {"rows_per_block": ["WARPS"], "memory_level_parallelism": ["UNROLL"],
               "persistent_grid": ["CTAS_PER_SM"], "cache_hint": ["LOAD_HINT"]},
  "params": {"WARPS": [8, 4, 16], "UNROLL": [4, 2, 8], "CTAS_PER_SM": [4, 2, 8], "LOAD_HINT": [1, 0]},
  "let": {"ctas": "min(ceil_div(M, WARPS), num_sms*CTAS_PER_SM)"},
  "constraints": ["N % 4 == 0"],
  "launches": [
    {"kernel": "reduce_sum_rows_warp_rows_grid_stride", "grid": ["ctas"], "block": ["32*WARPS"],
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Row sums of an fp32 [M, N] row-major matrix by a persistent grid of warps, each warp owning whole
// rows in turn: an architecture unlike the reference's (no CTA reduction, no shared memory, no
// barrier, no per-shape path).
//
//   grid          -> min(ceil(M / WARPS), num_sms * CTAS_PER_SM) CTAs of WARPS warps, all resident
//   warp w        -> rows w, w + W, w + 2W, ... (W = warps in the grid)
//   lane l        -> float4 vectors l, l + 32, ... of its row, UNROLL of them loaded before any add
//                    (UNROLL * 512 contiguous bytes per warp in flight), then the next UNROLL
//   row total     -> warp shuffle sum, written by lane 0
// A short row (N = 128: one float4 per lane) costs one load and five shuffles per warp; a long row
// streams with UNROLL vectors per lane in flight. LOAD_HINT 1: loads bypass L1
// (ld.global.nc.L1::no_allocate: x is read once); 0: the read-only path (__ldg).
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// x is read once: LOAD_HINT 1 skips L1, 0 the read-only path.
constexpr fk::LoadHint kLoadX = LOAD_HINT ? fk::LoadHint::nc_na : fk::LoadHint::nc;

extern "C" __global__ void __launch_bounds__(32 * WARPS)
reduce_sum_rows_warp_rows_grid_stride(const float* __restrict__ x,  // [M, N]
                                      float* __restrict__ y,        // [M]
                                      int M, int N) {
  const int lane = threadIdx.x % kWarp;
  const int warps = gridDim.x * WARPS;
  const int nvec = N / 4;  // float4 vectors per row (N % 4 == 0)
  for (int row = blockIdx.x * WARPS + threadIdx.x / kWarp; row < M; row += warps) {
    const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * N);  // [nvec]
    float sum = 0.f;
    for (int base = 0; base < nvec; base += UNROLL * kWarp) {
      float4 v[UNROLL];  // [UNROLL] vectors of this lane, all loaded before the adds
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int idx = base + u * kWarp + lane;
        v[u] = idx < nvec ? fk::load<kLoadX>(xrow + idx) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    sum = fk::warp_sum(sum);
    if (lane == 0) y[row] = sum;
  }
}
