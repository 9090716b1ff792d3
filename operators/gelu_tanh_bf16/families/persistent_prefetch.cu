/* forgek
{
  "name": "gelu_tanh_persistent_prefetch",
  "mechanisms": ["persistent_grid", "memory_level_parallelism", "vector_16B", "streaming_store"],
  "controls": {"persistent_grid": ["CTAS_PER_SM"], "block_size": ["THREADS"], "memory_level_parallelism": ["UNROLL"],
               "register_prefetch": ["PREFETCH"], "tanh_form": ["TANH"]},
  "params": {"CTAS_PER_SM": [4, 2, 8], "THREADS": [256, 512, 128], "UNROLL": [4, 2, 8], "PREFETCH": [1, 0],
             "TANH": [1, 0]},
  "let": {"tile_vecs": "THREADS*UNROLL"},
  "constraints": ["N % 8 == 0", "CTAS_PER_SM*THREADS <= 2048", "UNROLL*(1+PREFETCH) <= 8",
                  "N/8 + (num_sms*CTAS_PER_SM + 1)*tile_vecs < 2147483647"],
  "launches": [
    {"kernel": "gelu_tanh_persistent_prefetch",
     "grid": ["min(num_sms*CTAS_PER_SM, ceil_div(N/8, tile_vecs))"], "block": ["THREADS"],
     "args": ["x", "y", "N"]}
  ]
}
*/
// tanh-GELU over a flat bf16 vector with a persistent grid that software-pipelines its loads.
//
//   x, y  [N] bf16, viewed as [N/8] 16-byte vectors, cut into tiles of THREADS*UNROLL vectors
//   grid     -> CTAS_PER_SM CTAs per SM (num_sms SMs), launched once; CTA b takes tiles b, b+grid, ...
//   thread t -> vectors t, t+THREADS, ..., t+(UNROLL-1)*THREADS of each tile (coalesced warp accesses)
// PREFETCH = 1: while the math and stores of tile k run, the loads of tile k+grid are already in
// flight (a register double buffer), so each thread always has UNROLL 16-byte loads outstanding and
// the DRAM queue never drains between tiles; the grid never pays a CTA launch or a wave tail.
// PREFETCH = 0: a plain grid-stride loop (loads of a tile issued together, then its math).
// Streaming accesses: evict-first loads of x, streaming stores of y (neither is reused).
// TANH: 1 = 0.5x + 0.5x*tanh.approx(u) (one MUFU op), 0 = x / (1 + exp(-2u)) (two MUFU ops).
#include <cuda_bf16.h>
#include <forgek/activation.cuh>
#include <forgek/vec.cuh>

// y = 0.5 * x * (1 + tanh(k * (x + 0.044715 x^3))), k = sqrt(2/pi), in fp32, in the TANH form.
__device__ __forceinline__ float gelu_tanh(float x) {
  return TANH ? fk::gelu_tanh_approx(x) : fk::gelu_tanh_sigmoid(x);
}

__device__ __forceinline__ uint4 gelu_vector(uint4 in) { return fk::map_bf16x8(in, gelu_tanh); }

// Issues the loads of this thread's UNROLL vectors of tile `tile` (vectors past nvec are skipped).
__device__ __forceinline__ void load_tile(uint4 (&v)[UNROLL], const uint4* __restrict__ x4, int tile, int nvec) {
  const int first = tile * (THREADS * UNROLL) + threadIdx.x;
#pragma unroll
  for (int i = 0; i < UNROLL; ++i)
    if (first + i * THREADS < nvec) v[i] = fk::ld_global_cs(x4 + first + i * THREADS);
}

__device__ __forceinline__ void store_tile(const uint4 (&v)[UNROLL], uint4* __restrict__ y4, int tile, int nvec) {
  const int first = tile * (THREADS * UNROLL) + threadIdx.x;
#pragma unroll
  for (int i = 0; i < UNROLL; ++i)
    if (first + i * THREADS < nvec) fk::st_global_cs(y4 + first + i * THREADS, gelu_vector(v[i]));
}

extern "C" __global__ void __launch_bounds__(THREADS)
gelu_tanh_persistent_prefetch(const __nv_bfloat16* __restrict__ x,  // [N]
                              __nv_bfloat16* __restrict__ y,        // [N]
                              int N) {
  const int nvec = N / 8;  // N % 8 == 0 (a manifest constraint)
  const int tiles = (nvec + THREADS * UNROLL - 1) / (THREADS * UNROLL);
  const uint4* x4 = reinterpret_cast<const uint4*>(x);
  uint4* y4 = reinterpret_cast<uint4*>(y);

  uint4 cur[UNROLL];  // [UNROLL] vectors of the tile being computed
  int tile = blockIdx.x;  // grid <= tiles: every CTA owns at least one tile
  load_tile(cur, x4, tile, nvec);
  for (; tile < tiles; tile += gridDim.x) {
    const int next = tile + gridDim.x;  // its loads are skipped past nvec (next >= tiles)
    if (PREFETCH) {
      uint4 nxt[UNROLL];  // [UNROLL] vectors of the next tile, in flight during this tile's math
      load_tile(nxt, x4, next, nvec);
      store_tile(cur, y4, tile, nvec);
#pragma unroll
      for (int i = 0; i < UNROLL; ++i) cur[i] = nxt[i];
    } else {
      store_tile(cur, y4, tile, nvec);
      load_tile(cur, x4, next, nvec);
    }
  }
}
