/* forgek
{
  "name": "transpose_naive_2d",
  "mechanisms": [],
  "params": {"TILE": 32},
  "launches": [
    {"kernel": "transpose_bf16_seed", "grid": ["ceil_div(N, TILE)", "ceil_div(M, TILE)"], "block": ["TILE", "8"],
     "args": ["in", "out", "M", "N"]}
  ]
}
*/
// A plain starting point: each CTA covers a TILE x TILE block of `in`; thread (x, y) copies
// in[i, j] to out[j, i] for rows i = y, y+8, ... of the block, straight from global memory.
// Reads are coalesced (consecutive x read consecutive j), writes are not (consecutive x write
// rows M elements apart): a shared-memory tile would fix that, and is left for the search.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(TILE * 8)
transpose_bf16_seed(const __nv_bfloat16* __restrict__ in,  // [M, N]
                    __nv_bfloat16* __restrict__ out,       // [N, M]
                    int M, int N) {
  const int j = blockIdx.x * TILE + threadIdx.x;
  if (j >= N) return;
  for (int r = threadIdx.y; r < TILE; r += 8) {
    const int i = blockIdx.y * TILE + r;
    if (i < M) out[static_cast<size_t>(j) * M + i] = in[static_cast<size_t>(i) * N + j];
  }
}
