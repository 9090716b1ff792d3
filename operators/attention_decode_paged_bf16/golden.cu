/* forgek
{
  "name": "attention_decode_paged_bf16_golden",
  "params": {"THREADS": 128},
  "launches": [
    {"kernel": "attention_decode_golden",
     "grid": ["HQ", "BATCH"], "block": ["THREADS"], "smem": "4*CTX + 4*D",
     "args": ["q", "k_cache", "v_cache", "page_table", "o", "HQ", "HKV", "CTX", "PAGE", "D", "softmax_scale"]}
  ]
}
*/
// The truth for attention_decode_paged_bf16: one block per (head h, sequence b), the plain
// three-pass softmax in fp32 over all CTX tokens of the sequence, o written as fp32.
//   token t of sequence b: page = page_table[b, t / PAGE], slot = t % PAGE,
//   its key row is k_cache[page, slot, h / (HQ/HKV), 0..D).
//   1. s[t] = softmax_scale * q · k_t (a warp per token: lanes split D, a shuffle sum);
//   2. m = max s, p[t] = exp(s[t] - m), l = sum p (block reductions);
//   3. o[d] = sum_t p[t] * v_t[d] / l, one thread per d.
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
attention_decode_golden(const __nv_bfloat16* __restrict__ q,        // [BATCH, HQ, D]
                        const __nv_bfloat16* __restrict__ k_cache,  // [NUM_PAGES, PAGE, HKV, D]
                        const __nv_bfloat16* __restrict__ v_cache,  // [NUM_PAGES, PAGE, HKV, D]
                        const int* __restrict__ page_table,         // [BATCH, CTX / PAGE]
                        float* __restrict__ o,                      // [BATCH, HQ, D], fp32
                        int HQ, int HKV, int CTX, int PAGE, int D, float softmax_scale)
{
  extern __shared__ float smem[];
  float* const s = smem;            // [CTX] scores, then probabilities
  float* const q_row = smem + CTX;  // [D]
  __shared__ float slots[WARPS];

  const int h = blockIdx.x, b = blockIdx.y;
  const int kvh = h / (HQ / HKV);
  const int pages_per_seq = CTX / PAGE;
  const int* pages = page_table + (size_t)b * pages_per_seq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // Offset of (token t of this sequence, this kv head) in the cache, in elements.
  auto row_of = [&](int t) -> size_t {
    return (((size_t)pages[t / PAGE] * PAGE + t % PAGE) * HKV + kvh) * D;
  };

  const size_t q_off = ((size_t)b * HQ + h) * D;
  for (int d = threadIdx.x; d < D; d += THREADS) q_row[d] = __bfloat162float(q[q_off + d]);
  __syncthreads();

  // 1. scores (unrolled: several independent token rows in flight per warp)
#pragma unroll 4
  for (int t = warp; t < CTX; t += WARPS) {
    const __nv_bfloat16* kt = k_cache + row_of(t);
    float dot = 0.0f;
    for (int d = lane; d < D; d += 32) dot = fmaf(q_row[d], __bfloat162float(kt[d]), dot);
    dot = warp_sum(dot);
    if (lane == 0) s[t] = softmax_scale * dot;
  }
  __syncthreads();

  // 2. max-subtracted exponentials and their sum
  float m = __int_as_float(0xff800000);  // -inf
  for (int t = threadIdx.x; t < CTX; t += THREADS) m = fmaxf(m, s[t]);
  m = block_reduce<true>(m, slots);
  float l = 0.0f;
  for (int t = threadIdx.x; t < CTX; t += THREADS) {
    const float p = expf(s[t] - m);
    s[t] = p;
    l += p;
  }
  l = block_reduce<false>(l, slots);  // its barriers also publish every p[t]

  // 3. o = P · V / l
  for (int d = threadIdx.x; d < D; d += THREADS) {
    float acc = 0.0f;
#pragma unroll 8
    for (int t = 0; t < CTX; ++t) acc = fmaf(s[t], __bfloat162float(v_cache[row_of(t) + d]), acc);
    o[q_off + d] = acc / l;
  }
}
