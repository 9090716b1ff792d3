/* forgek
{
  "name": "embedding_gather_row_per_cta",
  "mechanisms": ["vector_16B", "streaming_store"],
  "params": {"ITEMS": 4},
  "let": {"threads": "32*ceil_div(ceil_div(D/8, ITEMS), 32)"},
  "constraints": ["D % 8 == 0", "threads <= 1024"],
  "launches": [
    {"kernel": "embedding_gather_bf16_reference", "grid": ["T"], "block": ["threads"],
     "args": ["ids", "table", "out", "T", "D"]}
  ]
}
*/
// Expert embedding gather: one CTA per output row, 16-byte copies, all of a thread's loads in
// flight at once.
//
// CTA i reads ids[i] once (a broadcast load), then thread t copies 16-byte vectors
// t, t+T', ..., t+(ITEMS-1)*T' of the row (T' = blockDim.x, sized so that T'*ITEMS*8 >= D: 128
// threads at D = 4096, each warp access 512 contiguous bytes). Every load is issued before the
// first store. Table rows go through the read-only path with default caching (a repeated id that
// is still in L2 is served from there); out is written with streaming stores.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(1024)
embedding_gather_bf16_reference(const int* __restrict__ ids,             // [T], in [0, V)
                                const __nv_bfloat16* __restrict__ table, // [V, D]
                                __nv_bfloat16* __restrict__ out,         // [T, D]
                                int T, int D) {
  const int i = blockIdx.x;
  if (i >= T) return;
  const int tid = threadIdx.x, threads = blockDim.x;
  const int nvec = D / 8;  // 16-byte vectors per row
  const uint4* src = reinterpret_cast<const uint4*>(table + static_cast<size_t>(__ldg(ids + i)) * D);
  uint4* dst = reinterpret_cast<uint4*>(out + static_cast<size_t>(i) * D);

  uint4 v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int idx = k * threads + tid;
    if (idx < nvec) v[k] = __ldg(src + idx);
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int idx = k * threads + tid;
    if (idx < nvec) __stcs(dst + idx, v[k]);
  }
}
