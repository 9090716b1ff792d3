/* forgek
{
  "name": "rmsnorm_row_per_cta",
  "mechanisms": ["vector_16B", "register_row_cache", "warp_shuffle_reduction", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"tile": ["THREADS", "ITEMS"], "vector_16B": ["VEC"], "cache_hint": ["LOAD_CS"],
               "streaming_store": ["STORE_CS"], "memory_level_parallelism": ["W_EARLY"]},
  "params": {"THREADS": [128, 256, 64, 512, 1024], "ITEMS": [4, 2, 8, 1, 16], "VEC": [8, 4],
             "LOAD_CS": [0, 1], "STORE_CS": [0, 1], "W_EARLY": [1, 0]},
  "let": {"row_capacity": "THREADS*ITEMS*VEC"},
  "constraints": ["N % VEC == 0", "N <= row_capacity", "row_capacity <= 2*N", "ITEMS*VEC*(1 + W_EARLY) <= 128"],
  "launches": [
    {"kernel": "rmsnorm_bf16_row_per_cta", "grid": ["M"], "block": ["THREADS"],
     "args": ["x", "w", "y", "M", "N", "eps"]}
  ]
}
*/
// RMSNorm of bf16 rows, the reference's design with its knobs exposed: one CTA per row, the row
// read once into registers, a CTA reduction, y written from registers (4 bytes of DRAM per element).
//   row r      -> CTA blockIdx.x = r
//   thread t   -> vectors t, t+THREADS, ..., t+(ITEMS-1)*THREADS of the row, VEC bf16 each
//                 (VEC = 8: 16-byte accesses, a warp instruction moves 512 contiguous bytes;
//                  VEC = 4: 8-byte accesses, twice the instructions for the same bytes)
//   THREADS*ITEMS*VEC covers the row (N <= capacity <= 2N); vectors past the row are zero and skipped.
// LOAD_CS = 1 loads x evict-first (read once); STORE_CS = 1 writes y with streaming stores.
// W_EARLY = 0: w (shared by every row, L2-resident once warm) is loaded after the reduction through
// the read-only path, so its registers are not live across the barrier (the reference's choice).
// W_EARLY = 1: w is loaded together with x, so on few-row shapes with a cold L2 its DRAM round trip
// overlaps that of x instead of following the barrier (measured: decode shapes gain from it).
#include <cuda_bf16.h>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// VEC consecutive bf16 moved as one access: uint4 (16 B) or uint2 (8 B).
using Access = fk::Access<2 * VEC>;
// x is read once: LOAD_CS = 1 loads it evict-first; y is never read back: STORE_CS = 1 streams it.
constexpr fk::LoadHint kLoadX = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;
constexpr fk::StoreHint kStoreY = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_bf16_row_per_cta(const __nv_bfloat16* __restrict__ x,  // [M, N]
                         const __nv_bfloat16* __restrict__ w,  // [N]
                         __nv_bfloat16* __restrict__ y,        // [M, N]
                         int M, int N, float eps) {
  __shared__ float warp_partial[THREADS / kWarp];  // [THREADS/32] one sum of squares per warp
  const int row = blockIdx.x;                       // grid = M: every row is in range
  const int tid = threadIdx.x;
  const int nvec = N / VEC;  // accesses per row (N % VEC == 0)
  const Access* xrow = reinterpret_cast<const Access*>(x + static_cast<size_t>(row) * N);
  Access* yrow = reinterpret_cast<Access*>(y + static_cast<size_t>(row) * N);

  // Issue every load of the thread's share before any arithmetic.
  const Access* w_vec = reinterpret_cast<const Access*>(w);
  Access v[ITEMS];  // [ITEMS] x VEC bf16; past the row: zero
#if W_EARLY
  Access g_early[ITEMS];  // [ITEMS] x VEC bf16 of w, loaded with x
#endif
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    v[i] = Access{};
    if (idx < nvec) v[i] = fk::load<kLoadX>(xrow + idx);
#if W_EARLY
    g_early[i] = Access{};
    if (idx < nvec) g_early[i] = __ldg(w_vec + idx);
#endif
  }

  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    float f[VEC];
    fk::unpack_bf16(v[i], f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) sq = fmaf(f[k], f[k], sq);
  }
  const float rstd = rsqrtf(fk::block_sum(sq, warp_partial) / N + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = i * THREADS + tid;
    if (idx < nvec) {
      float f[VEC], g[VEC];
      fk::unpack_bf16(v[i], f);
#if W_EARLY
      fk::unpack_bf16(g_early[i], g);
#else
      fk::unpack_bf16(__ldg(w_vec + idx), g);
#endif
#pragma unroll
      for (int k = 0; k < VEC; ++k) f[k] = f[k] * rstd * g[k];
      fk::store<kStoreY>(yrow + idx, fk::pack_bf16(f));
    }
  }
}
