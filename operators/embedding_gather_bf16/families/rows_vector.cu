/* forgek
{
  "name": "embedding_rows_vector",
  "mechanisms": ["vector_16B", "memory_level_parallelism", "streaming_store"],
  "controls": {"memory_level_parallelism": ["ITEMS"], "rows_per_block": ["ROWS"], "cache_hint": ["LOAD_HINT"],
               "streaming_store": ["STORE_HINT"]},
  "params": {"ITEMS": [4, 2, 8, 16], "ROWS": [1, 2, 4], "LOAD_HINT": [0, 1, 2], "STORE_HINT": [1, 0]},
  "let": {"row_threads": "32*ceil_div(ceil_div(D/8, ITEMS), 32)", "max_threads": "min(1024, 8192/ITEMS)"},
  "constraints": ["D % 8 == 0", "row_threads*ROWS <= max_threads"],
  "launches": [
    {"kernel": "embedding_rows_vector", "grid": ["ceil_div(T, ROWS)"], "block": ["row_threads", "ROWS"],
     "args": ["ids", "table", "out", "T", "D"]}
  ]
}
*/
// Embedding gather out[i, :] = table[ids[i], :], the reference's design (reference.cu) with its
// knobs opened up: ROWS output rows per CTA, ITEMS 16-byte vectors per thread, cache hints.
//
// Block (row_threads, ROWS): threadIdx.y picks row i = blockIdx.x*ROWS + y; its row_threads
// threads (row_threads*ITEMS*8 >= D) copy 16-byte vectors x, x + row_threads, ... of the row, so a
// warp moves 512 contiguous bytes per access. Each thread issues all ITEMS loads before its first
// store (ITEMS*16 bytes in flight per thread; row_threads*ROWS*ITEMS*16 per CTA).
//   LOAD_HINT 0: ld.global.nc (read-only path, L1 allocating, the reference)
//             1: ld.global.nc.L1::no_allocate (rows are read once per id: L1 would not help)
//             2: ld.global.cs (evict-first in L2: table lines leave before the output's dirty lines)
//   STORE_HINT 1: st.global.cs (evict-first, the reference); 0: plain write-back stores.
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

// The table's rows are read through LOAD_HINT's path, the output written with STORE_HINT's (above).
constexpr fk::LoadHint kLoadRow = LOAD_HINT == 1   ? fk::LoadHint::nc_na
                                  : LOAD_HINT == 2 ? fk::LoadHint::cs
                                                   : fk::LoadHint::nc;
constexpr fk::StoreHint kStoreRow = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;

// The largest CTA that still leaves registers for ITEMS vectors per thread without spilling
// (ITEMS = 16: 64 data registers per thread, at most 512 threads); the manifest's max_threads.
constexpr int kMaxThreads = 8192 / ITEMS < 1024 ? 8192 / ITEMS : 1024;

extern "C" __global__ void __launch_bounds__(kMaxThreads)
embedding_rows_vector(const int* __restrict__ ids,             // [T], in [0, V)
                      const __nv_bfloat16* __restrict__ table, // [V, D]
                      __nv_bfloat16* __restrict__ out,         // [T, D]
                      int T, int D) {
  const int i = blockIdx.x * ROWS + threadIdx.y;  // output row of this thread row
  if (i >= T) return;
  const int x = threadIdx.x, row_threads = blockDim.x;
  const int nvec = D / 8;  // 16-byte vectors per row
  const uint4* src = reinterpret_cast<const uint4*>(table + static_cast<size_t>(__ldg(ids + i)) * D);  // [nvec]
  uint4* dst = reinterpret_cast<uint4*>(out + static_cast<size_t>(i) * D);                            // [nvec]

  uint4 v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int idx = k * row_threads + x;
    if (idx < nvec) v[k] = fk::load<kLoadRow>(src + idx);
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int idx = k * row_threads + x;
    if (idx < nvec) fk::store<kStoreRow>(dst + idx, v[k]);
  }
}
