/* forgek
{
  "name": "softmax_row_per_block",
  "mechanisms": ["online_softmax", "warp_shuffle_reduction", "vector_16B", "smem_row_cache",
                 "streaming_store"],
  "controls": {"vector_16B": ["VEC"], "smem_row_cache": ["SMEM_CACHE"], "block_size": ["BLOCK"]},
  "params": {"BLOCK": [128, 256, 512, 1024], "VEC": [1, 2, 4], "SMEM_CACHE": [0, 1]},
  "let": {"row_smem": "SMEM_CACHE*4*N"},
  "constraints": ["N % VEC == 0", "row_smem <= 230400"],
  "launches": [
    {"kernel": "softmax_row_per_block", "grid": ["M"], "block": ["BLOCK"], "smem": "row_smem",
     "args": ["x", "y", "M", "N"]}
  ]
}
*/
// Softmax over the last axis of an fp32 [M, N] row-major matrix, one CTA of BLOCK threads per row.
//   pass 1: online softmax over x: each thread keeps a running (max, sum of exp(x - max)) over
//           packs idx = t, t+BLOCK, ...; with SMEM_CACHE the packs are also kept in shared memory.
//   reduce: warps merge their states by shuffles, warp 0 merges the BLOCK/32 warp states.
//   pass 2: y = exp(x - max) / sum, reading x again: from shared memory (SMEM_CACHE = 1: one DRAM
//           read per element, but a 4*N-byte footprint limits CTAs per SM) or from global memory
//           (SMEM_CACHE = 0: the row was just read, so the re-read mostly hits L2).
// Works for any N (N % VEC == 0); the family's fallback for rows too long for registers.
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = BLOCK / kWarp;

// VEC consecutive floats of a row, moved as one VEC*4-byte access.
using Pack = fk::FloatPack<VEC>;
// Last read of x by this kernel: evict-first, so it does not push still-needed rows out of L2.
constexpr fk::LoadHint kLastRead = fk::LoadHint::cs;
// y is never read again by this kernel: streaming stores.
constexpr fk::StoreHint kStoreY = fk::StoreHint::cs;

// The online-softmax state of a set of values: their max and the sum of exp(value - max).
using RowStat = fk::SoftmaxState;

// The whole CTA's state, returned to every thread.
__device__ __forceinline__ RowStat block_merge(RowStat s) {
  __shared__ RowStat warp_stat[kWarps];
  __shared__ RowStat block_stat;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  s = fk::warp_softmax_merge(s);
  if (lane == 0) warp_stat[warp] = s;
  __syncthreads();
  if (warp == 0) {
    RowStat w = lane < kWarps ? warp_stat[lane] : RowStat{fk::neg_inf(), 0.f};
    w = fk::warp_softmax_merge(w);
    if (lane == 0) block_stat = w;
  }
  __syncthreads();
  return block_stat;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_row_per_block(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  extern __shared__ float4 dynamic_smem[];
  Pack* row_cache = reinterpret_cast<Pack*>(dynamic_smem);  // [N/VEC] packs when SMEM_CACHE

  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;
  const int npacks = N / VEC;  // N % VEC == 0 (a manifest constraint) keeps every pack aligned

  RowStat s{fk::neg_inf(), 0.f};
#pragma unroll 4
  for (int idx = threadIdx.x; idx < npacks; idx += BLOCK) {
    const Pack p = fk::load_floats<VEC>(xrow + idx * VEC);
    if (SMEM_CACHE) row_cache[idx] = p;  // read back in pass 2 by this same thread: no barrier
    s = fk::softmax_absorb(s, p.v);  // one rescale per pack: VEC+1 exps per VEC elements
  }
  s = block_merge(s);

  const float inv_sum = 1.f / s.sum;
#pragma unroll 4
  for (int idx = threadIdx.x; idx < npacks; idx += BLOCK) {
    Pack p = SMEM_CACHE ? row_cache[idx] : fk::load_floats<VEC, kLastRead>(xrow + idx * VEC);
#pragma unroll
    for (int j = 0; j < VEC; ++j) p.v[j] = __expf(p.v[j] - s.max) * inv_sum;
    fk::store_floats<kStoreY>(yrow + idx * VEC, p);
  }
}
