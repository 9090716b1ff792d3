/* forgek
{
  "name": "top_p_sampling_radix_select",
  "mechanisms": ["vector_16B", "online_softmax", "radix_select", "smem_atomics", "block_scan", "warp_shuffle_reduction"],
  "params": {"THREADS": 1024},
  "constraints": ["V % 4 == 0"],
  "launches": [
    {"kernel": "top_p_sampling_reference", "grid": ["M"], "block": ["THREADS"], "args": ["logits", "u", "samples", "top_p", "M", "V"]}
  ]
}
*/
// Expert top-p sampling from logits: one CTA of 1024 threads per row, about 6 streaming passes over
// the row (the first from DRAM, the others mostly from L2), float4 loads, no sort.
//   pass 1      online softmax state: m = max, W = sum of exp(x - m).
//   passes 2-5  radix select of theta, 8 bits of the order-preserving key per pass, most significant
//               first: each pass adds exp(x - m) of the logits still matching the chosen key prefix
//               into 256 digit bins (one private bin set per warp, shared-memory float atomics),
//               then picks the largest digit d whose bins >= d, plus the mass above the prefix,
//               reach top_p * W (a suffix scan of the bins). After 4 passes the prefix is theta's
//               key and Z = mass(theta) = the mass above it + its own bin.
//   pass 6      inverse CDF in column order: chunks of THREADS float4; each thread sums its 4
//               nucleus weights, a block exclusive scan gives its running start, and the first
//               column whose running sum exceeds u*Z wins (shared atomicMin); the pass stops at
//               the chunk holding it.
// The digits of a radix select only ever narrow the candidate set, so the passes after the first
// touch few logits; the cost is streaming the row and its exps.
#include <cub/block/block_scan.cuh>
#include <forgek/softmax.cuh>

constexpr int kWarps = THREADS / 32;

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned integers.
__device__ __forceinline__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

using LseState = fk::SoftmaxState;

extern "C" __global__ void __launch_bounds__(THREADS)
top_p_sampling_reference(const float* __restrict__ logits,  // [M, V] row-major
                         const float* __restrict__ u,       // [M]
                         int* __restrict__ samples,         // [M]
                         float top_p, int M, int V) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  __shared__ typename BlockScan::TempStorage scan_temp;
  __shared__ float warp_bins[kWarps][256];  // per-warp digit masses of one radix pass
  __shared__ float suffix[256];             // suffix[i]: mass of digits >= 255 - i
  __shared__ LseState warp_state[kWarps];
  __shared__ LseState row_state;
  __shared__ int chosen;                    // index i of the chosen digit 255 - i
  __shared__ int found, last_in_nucleus;

  const int row_index = blockIdx.x;
  if (row_index >= M) return;
  const float* row = logits + static_cast<size_t>(row_index) * V;
  const float4* row4 = reinterpret_cast<const float4*>(row);
  const int vectors = V / 4;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  // ---- pass 1: m and W --------------------------------------------------------------------------
  LseState st{fk::neg_inf(), 0.f};
  for (int q = threadIdx.x; q < vectors; q += THREADS) {
    const float4 f = row4[q];
    const float m = fmaxf(st.max, fmaxf(fmaxf(f.x, f.y), fmaxf(f.z, f.w)));
    st = {m, st.sum * __expf(st.max - m) + __expf(f.x - m) + __expf(f.y - m) + __expf(f.z - m) + __expf(f.w - m)};
  }
  st = fk::warp_softmax_merge(st);
  if (lane == 0) warp_state[warp] = st;
  __syncthreads();
  if (warp == 0) {
    st = fk::warp_softmax_merge(lane < kWarps ? warp_state[lane] : LseState{fk::neg_inf(), 0.f});
    if (lane == 0) row_state = st;
  }
  __syncthreads();
  const float row_max = row_state.max;
  const float needed = top_p * row_state.sum;

  // ---- passes 2-5: radix select of theta's key -----------------------------------------------
  unsigned prefix = 0;  // chosen high bits of theta's key so far (block-uniform)
  float above = 0.f;    // mass of logits whose key is above the current prefix's range
  float z = 0.f;        // after the last pass: mass(theta)
  for (int shift = 24; shift >= 0; shift -= 8) {
    const unsigned high_mask = shift == 24 ? 0u : ~0u << (shift + 8);
    for (int b = lane; b < 256; b += 32) warp_bins[warp][b] = 0.f;
    __syncthreads();
    for (int q = threadIdx.x; q < vectors; q += THREADS) {
      const float4 f = row4[q];
      const float e[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const unsigned key = order_key(e[k]);
        if ((key & high_mask) == prefix) atomicAdd(&warp_bins[warp][(key >> shift) & 0xffu], __expf(e[k] - row_max));
      }
    }
    __syncthreads();
    // Thread i < 256 owns digit 255 - i: total its bin over the warps, suffix-scan in that order.
    float bin = 0.f, incl = 0.f;
    if (threadIdx.x < 256)
      for (int w = 0; w < kWarps; ++w) bin += warp_bins[w][255 - threadIdx.x];
    BlockScan(scan_temp).InclusiveSum(bin, incl);
    if (threadIdx.x < 256) suffix[threadIdx.x] = incl;
    if (threadIdx.x == 0) chosen = 255;  // fallback when rounding leaves no digit reaching `needed`
    __syncthreads();
    // The reaching condition is monotone in i; the first i that reaches is the largest digit.
    if (threadIdx.x < 256 && above + suffix[threadIdx.x] >= needed &&
        (threadIdx.x == 0 || above + suffix[threadIdx.x - 1] < needed))
      chosen = threadIdx.x;
    __syncthreads();
    const int i = chosen;
    const float beyond = i > 0 ? suffix[i - 1] : 0.f;  // mass of digits above the chosen one
    z = above + suffix[i];
    above += beyond;
    prefix |= static_cast<unsigned>(255 - i) << shift;
    __syncthreads();  // suffix, chosen and scan_temp are rewritten by the next pass
  }
  const unsigned theta_key = prefix;
  const float r = u[row_index] * z;

  // ---- pass 6: inverse CDF in column order ------------------------------------------------------
  if (threadIdx.x == 0) found = V, last_in_nucleus = -1;
  __syncthreads();
  float running = 0.f;  // nucleus mass of the chunks before this one (block-uniform)
  for (int q0 = 0; q0 < vectors; q0 += THREADS) {
    const int q = q0 + threadIdx.x;
    float w[4] = {0.f, 0.f, 0.f, 0.f};
    unsigned in_bits = 0;  // bit k: element 4q+k is in the nucleus
    int last = -1;
    if (q < vectors) {
      const float4 f = row4[q];
      const float e[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (order_key(e[k]) >= theta_key) w[k] = __expf(e[k] - row_max), in_bits |= 1u << k, last = 4 * q + k;
    }
    const float mine = w[0] + w[1] + w[2] + w[3];
    float before, chunk_total;
    BlockScan(scan_temp).ExclusiveSum(mine, before, chunk_total);
    if (last >= 0) atomicMax(&last_in_nucleus, last);
    float acc = running + before;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      acc += w[k];
      if ((in_bits >> k & 1u) && acc > r) {
        atomicMin(&found, 4 * q + k);
        break;
      }
    }
    running += chunk_total;
    __syncthreads();
    if (found < V) break;  // block-uniform after the barrier
  }
  if (threadIdx.x == 0) samples[row_index] = found < V ? found : last_in_nucleus;
}
