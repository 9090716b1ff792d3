/* forgek
{
  "name": "attention_prefill_bf16_golden",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "attention_prefill_golden",
     "grid": ["S", "HQ", "BATCH"], "block": ["THREADS"], "smem": "4*S + 4*D",
     "args": ["q", "k", "v", "o", "HQ", "HKV", "S", "D", "softmax_scale"]}
  ]
}
*/
// The truth for attention_prefill_bf16: one block per (query i, head h, batch b), the plain
// three-pass softmax in fp32, o written as fp32.
//   1. s[j] = softmax_scale * q_i · k_j for every unmasked key j <= i (a warp per key: lanes split
//      D, a shuffle sum), kept in shared memory;
//   2. m = max_j s[j], then p[j] = exp(s[j] - m) and l = sum_j p[j] (block reductions);
//   3. o_i[d] = sum_j p[j] * v_j[d] / l, one thread per d (neighbouring threads read neighbouring
//      d of one v row).
// Query head h reads kv head h / (HQ / HKV). O(S^2 D) work in all, no reuse between queries:
// simple, and parallel enough (BATCH*HQ*S blocks) to finish the largest config in about a second.
#include <cuda_bf16.h>

#define WARPS (THREADS / 32)

__device__ float warp_sum(float v)
{
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
__device__ float warp_max(float v)
{
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// Reduces one value per thread over the block; every thread gets the result. `slots` holds WARPS
// floats; the trailing barrier lets the caller reuse it at once.
template <bool kMax>
__device__ float block_reduce(float v, float* slots)
{
  v = kMax ? warp_max(v) : warp_sum(v);
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
  __syncthreads();
  float r = slots[0];
  for (int w = 1; w < WARPS; ++w) r = kMax ? fmaxf(r, slots[w]) : r + slots[w];
  __syncthreads();
  return r;
}

extern "C" __global__ void __launch_bounds__(THREADS)
attention_prefill_golden(const __nv_bfloat16* __restrict__ q,  // [BATCH, HQ, S, D]
                         const __nv_bfloat16* __restrict__ k,  // [BATCH, HKV, S, D]
                         const __nv_bfloat16* __restrict__ v,  // [BATCH, HKV, S, D]
                         float* __restrict__ o,                // [BATCH, HQ, S, D], fp32
                         int HQ, int HKV, int S, int D, float softmax_scale)
{
  extern __shared__ float smem[];
  float* const s = smem;          // [S] scores, then probabilities, of keys 0..i
  float* const q_row = smem + S;  // [D] the query, widened to fp32
  __shared__ float slots[WARPS];

  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (HQ / HKV);  // grouped-query: HQ/HKV query heads share one kv head
  const size_t q_off = (((size_t)b * HQ + h) * S + i) * D;
  const __nv_bfloat16* kh = k + ((size_t)b * HKV + kvh) * S * D;  // [S, D] of this kv head
  const __nv_bfloat16* vh = v + ((size_t)b * HKV + kvh) * S * D;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int d = threadIdx.x; d < D; d += THREADS) q_row[d] = __bfloat162float(q[q_off + d]);
  __syncthreads();

  // 1. scores of keys 0..i (causal: keys after i are never read). Unrolled so that a warp has
  //    several independent key rows in flight instead of waiting on each one's L2 latency.
#pragma unroll 4
  for (int j = warp; j <= i; j += WARPS) {
    float dot = 0.0f;
    for (int d = lane; d < D; d += 32) dot = fmaf(q_row[d], __bfloat162float(kh[(size_t)j * D + d]), dot);
    dot = warp_sum(dot);
    if (lane == 0) s[j] = softmax_scale * dot;
  }
  __syncthreads();

  // 2. max-subtracted exponentials and their sum
  float m = __int_as_float(0xff800000);  // -inf
  for (int j = threadIdx.x; j <= i; j += THREADS) m = fmaxf(m, s[j]);
  m = block_reduce<true>(m, slots);
  float l = 0.0f;
  for (int j = threadIdx.x; j <= i; j += THREADS) {
    const float p = expf(s[j] - m);
    s[j] = p;
    l += p;
  }
  l = block_reduce<false>(l, slots);  // its barriers also publish every p[j]

  // 3. o_i = P · V / l
  for (int d = threadIdx.x; d < D; d += THREADS) {
    float acc = 0.0f;
#pragma unroll 8
    for (int j = 0; j <= i; ++j) acc = fmaf(s[j], __bfloat162float(vh[(size_t)j * D + d]), acc);
    o[q_off + d] = acc / l;
  }
}
