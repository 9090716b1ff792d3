/* forgek
{
  "name": "embedding_bulk_row_ring",
  "mechanisms": ["tma", "mbarrier_pipeline", "persistent_grid", "streaming_store"],
  "controls": {"mbarrier_pipeline": ["STAGES"], "persistent_grid": ["CTAS_PER_SM"], "cache_hint": ["LOAD_HINT"],
               "streaming_store": ["STORE_HINT"]},
  "params": {"STAGES": [8, 4, 6, 12, 16], "CTAS_PER_SM": [2, 1, 3, 4], "LOAD_HINT": [0, 1], "STORE_HINT": [0, 1]},
  "let": {"row_bytes": "D*2", "smem_bytes": "STAGES*row_bytes"},
  "constraints": ["D % 8 == 0", "row_bytes < 1048576", "CTAS_PER_SM*(smem_bytes + 1024) <= 233472"],
  "launches": [
    {"kernel": "embedding_bulk_row_ring", "grid": ["min(T, num_sms*CTAS_PER_SM)"], "block": [32],
     "smem": "smem_bytes", "args": ["ids", "table", "out", "T", "D"]}
  ]
}
*/
// Embedding gather out[i, :] = table[ids[i], :] done entirely by the TMA bulk-copy engine: rows go
// global -> shared -> global with one copy instruction each way, no data through registers.
//
// CTA b (one warp; G = min(T, num_sms*CTAS_PER_SM) CTAs, all resident) owns rows b, b+G, b+2G, ...
// (its fills m = 0, 1, 2, ...). Shared memory is a ring of STAGES row slots:
//   slot s: [D] bf16 (row_bytes = 2*D), full[s]: 1 arrival + row_bytes (the row has landed)
// Lane 0 keeps STAGES - 1 row loads in flight: on fill n's arrival it bulk-stores the slot to
// out[row], and once the store of fill n-1 has finished reading its slot it loads fill
// n-1+STAGES there. Each SM thus has ~CTAS_PER_SM*(STAGES-1) rows (8 KB each at D = 4096) of
// reads in flight, issued by one instruction per row.
// The ids lane 0 needs are read 32 fills at a time, one per lane, a batch ahead, so the id ->
// row-address dependency never stalls the ring.
//   LOAD_HINT 1: table rows loaded with an L2 evict-first policy; 0: default policy.
//   STORE_HINT 1: output rows stored with an L2 evict-first policy; 0: default policy.
#include <cuda_bf16.h>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>

constexpr int kWarp = 32;

// `bytes` (multiple of 16; both 16-byte aligned) from shared src to global dst by the bulk-copy
// engine, tracked in the calling thread's bulk group (fk::bulk_commit, fk::bulk_wait_read); with
// STORE_HINT the output lines are marked evict-first in L2 (written once, never read here).
__device__ __forceinline__ void bulk_store_linear(void* dst, const void* src, unsigned bytes) {
  if (STORE_HINT)
    fk::bulk_store_hint(dst, src, bytes, fk::policy_evict_first());
  else
    fk::bulk_store(dst, src, bytes);
}

// Fill m (row blockIdx.x + m*G) of this CTA's ring. Called by the whole warp, in order m = 0, 1, ...:
// lanes hold the ids of fills [32*(m/32), +32) in id_batch and of the next 32 in id_next.
__device__ __forceinline__ void issue_fill(int m, const int* __restrict__ ids, const __nv_bfloat16* __restrict__ table,
                                          int T, int D, unsigned char* slots, unsigned long long* full,
                                          int& id_batch, int& id_next) {
  const int lane = threadIdx.x % kWarp;
  const long long stride = gridDim.x;
  if ((m & 31) == 0) {
    id_batch = id_next;
    const long long r = blockIdx.x + (static_cast<long long>(m) + 32 + lane) * stride;
    id_next = r < T ? __ldg(ids + r) : 0;
  }
  const int id = __shfl_sync(0xffffffffu, id_batch, m & 31);
  if (lane == 0) {
    const unsigned row_bytes = static_cast<unsigned>(D) * 2;
    const int s = m % STAGES;
    fk::mbar_arrive_expect_tx(&full[s], row_bytes);
    const __nv_bfloat16* src = table + static_cast<size_t>(id) * D;
    if (LOAD_HINT) fk::bulk_load_hint(slots + static_cast<size_t>(s) * row_bytes, src, row_bytes, &full[s],
                                      fk::policy_evict_first());
    else fk::bulk_load(slots + static_cast<size_t>(s) * row_bytes, src, row_bytes, &full[s]);
  }
}

extern "C" __global__ void __launch_bounds__(kWarp)
embedding_bulk_row_ring(const int* __restrict__ ids,             // [T], in [0, V)
                        const __nv_bfloat16* __restrict__ table, // [V, D]
                        __nv_bfloat16* __restrict__ out,         // [T, D]
                        int T, int D) {
  extern __shared__ __align__(128) unsigned char slots[];  // [STAGES][D] bf16
  __shared__ unsigned long long full[STAGES];
  const int lane = threadIdx.x;
  const unsigned row_bytes = static_cast<unsigned>(D) * 2;  // multiple of 16 (D % 8 == 0)
  const int rows = (T - 1 - static_cast<int>(blockIdx.x)) / static_cast<int>(gridDim.x) + 1;  // >= 1: grid <= T

  if (lane == 0) {
    for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[s], 1);
    fk::fence_barrier_init();
  }
  __syncwarp();

  // ids of fills 0..31 (lane l: fill l), consumed by the first issue_fill.
  int id_batch = 0;
  int id_next = 0;
  {
    const long long r = blockIdx.x + static_cast<long long>(lane) * gridDim.x;
    id_next = r < T ? __ldg(ids + r) : 0;
  }
  for (int m = 0; m < STAGES && m < rows; ++m) issue_fill(m, ids, table, T, D, slots, full, id_batch, id_next);

  for (int n = 0; n < rows; ++n) {
    const int s = n % STAGES;
    fk::mbar_wait(&full[s], (n / STAGES) & 1);
    if (lane == 0) {
      const size_t row = blockIdx.x + static_cast<size_t>(n) * gridDim.x;
      bulk_store_linear(out + row * D, slots + static_cast<size_t>(s) * row_bytes, row_bytes);
      fk::bulk_commit();
    }
    // Refill the slot of fill n-1 with fill n-1+STAGES once its store has read it (every store
    // group but the newest one is done reading).
    const int m = n - 1 + STAGES;
    if (n >= 1 && m < rows) {
      if (lane == 0) fk::bulk_wait_read<1>();
      __syncwarp();
      issue_fill(m, ids, table, T, D, slots, full, id_batch, id_next);
    }
  }
  // Shared memory must outlive the stores that read it; wait for the writes as well.
  if (lane == 0) fk::bulk_wait<0>();
  __syncwarp();
}
