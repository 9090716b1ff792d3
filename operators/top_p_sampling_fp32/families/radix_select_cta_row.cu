/* forgek
{
  "name": "top_p_sampling_radix_select_cta_row",
  "mechanisms": ["vector_16B", "online_softmax", "radix_select", "smem_atomics", "block_scan",
                 "warp_shuffle_reduction", "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["BATCH"], "smem_atomics": ["BIN_WARPS"]},
  "params": {"THREADS": [1024, 512], "BATCH": [1, 2, 4], "BIN_WARPS": [1, 2, 4]},
  "let": {"bin_bytes": "4*256*(THREADS/32/BIN_WARPS)"},
  "constraints": ["V % 4 == 0", "bin_bytes <= 32768"],
  "launches": [
    {"kernel": "top_p_sampling_radix_select_cta_row", "grid": ["M"], "block": ["THREADS"],
     "args": ["logits", "u", "samples", "top_p", "M", "V"]}
  ]
}
*/
// The reference's design with its knobs as params: one CTA per row, six streaming passes over the
// row (the first from DRAM, the others mostly from L2), float4 loads, no sort.
//   row i       -> CTA i (THREADS threads)
//   thread t    -> float4 t, t+THREADS, ... of the row, BATCH of them loaded before any is used
//                  (THREADS*BATCH*16 bytes in flight per CTA)
//   pass 1      online softmax state: m = max, W = sum of exp(x - m)
//   passes 2-5  radix select of theta, 8 bits of the order-preserving key per pass, most significant
//               first: each pass adds exp(x - m) of the logits still matching the chosen key prefix
//               into 256 digit bins, one private bin set per BIN_WARPS warps (shared float
//               atomics: more sets, fewer collisions between warps), then takes the largest digit
//               whose bins >= it, plus the mass above the prefix, reach top_p * W (a suffix scan).
//               After 4 passes the prefix is theta's key.
//   pass 6      inverse CDF in column order: chunks of THREADS float4; each thread sums its 4
//               nucleus weights, a block exclusive scan gives its running start, the first column
//               whose running sum exceeds u*Z wins (shared atomicMin); the pass stops at that chunk.
#include <cub/block/block_scan.cuh>
#include <forgek/softmax.cuh>

constexpr int kWarps = THREADS / 32;
constexpr int kBinSets = kWarps / BIN_WARPS;

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned integers.
__device__ __forceinline__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

using LseState = fk::SoftmaxState;

// BATCH float4 of the row from vector q0 on, THREADS apart; slots past the row read as -inf and
// are flagged out of `valid` (bit k: slot k is a real vector).
__device__ __forceinline__ unsigned load_batch(const float4* row4, int q0, int vectors, float4 (&f)[BATCH]) {
  const float inf = fk::neg_inf();
  unsigned valid = 0;
#pragma unroll
  for (int k = 0; k < BATCH; ++k) {
    const int q = q0 + k * THREADS;
    if (q < vectors) f[k] = row4[q], valid |= 1u << k;
    else f[k] = make_float4(inf, inf, inf, inf);
  }
  return valid;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)  // one CTA per row: 1 per SM, no register squeeze
top_p_sampling_radix_select_cta_row(const float* __restrict__ logits,  // [M, V] row-major
                                    const float* __restrict__ u,       // [M]
                                    int* __restrict__ samples,         // [M]
                                    float top_p, int M, int V) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  __shared__ typename BlockScan::TempStorage scan_temp;
  __shared__ float bins[kBinSets][256];  // [kBinSets][256] digit masses of one radix pass
  __shared__ float suffix[256];          // suffix[i]: mass of digits >= 255 - i
  __shared__ LseState warp_state[kWarps];
  __shared__ LseState row_state;
  __shared__ int chosen;                 // index i of the chosen digit 255 - i
  __shared__ int found, last_in_nucleus;

  const int row_index = blockIdx.x;
  if (row_index >= M) return;
  const float4* row4 = reinterpret_cast<const float4*>(logits + static_cast<size_t>(row_index) * V);
  const int vectors = V / 4;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float* my_bins = bins[warp / BIN_WARPS];

  // ---- pass 1: m and W (masked slots are -inf: they add exp(-inf) = 0) -------------------------
  LseState st{fk::neg_inf(), 0.f};
  for (int q0 = threadIdx.x; q0 < vectors; q0 += THREADS * BATCH) {
    float4 f[BATCH];
    load_batch(row4, q0, vectors, f);
    float m = st.max;
#pragma unroll
    for (int k = 0; k < BATCH; ++k) m = fmaxf(m, fmaxf(fmaxf(f[k].x, f[k].y), fmaxf(f[k].z, f[k].w)));
    float s = st.sum * __expf(st.max - m);  // q0 < vectors: slot 0 is real, so m is finite
#pragma unroll
    for (int k = 0; k < BATCH; ++k)
      s += __expf(f[k].x - m) + __expf(f[k].y - m) + __expf(f[k].z - m) + __expf(f[k].w - m);
    st = {m, s};
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
  float z = 0.f;        // after the last pass: mass(theta) = Z
  for (int shift = 24; shift >= 0; shift -= 8) {
    const unsigned high_mask = shift == 24 ? 0u : ~0u << (shift + 8);
    for (int b = threadIdx.x; b < kBinSets * 256; b += THREADS) (&bins[0][0])[b] = 0.f;
    __syncthreads();
    for (int q0 = threadIdx.x; q0 < vectors; q0 += THREADS * BATCH) {
      float4 f[BATCH];
      const unsigned valid = load_batch(row4, q0, vectors, f);
#pragma unroll
      for (int k = 0; k < BATCH; ++k) {
        if (!(valid >> k & 1u)) continue;
        const float e[4] = {f[k].x, f[k].y, f[k].z, f[k].w};
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const unsigned key = order_key(e[c]);
          if ((key & high_mask) == prefix) atomicAdd(&my_bins[(key >> shift) & 0xffu], __expf(e[c] - row_max));
        }
      }
    }
    __syncthreads();
    // Thread i < 256 owns digit 255 - i: total its bin over the sets, suffix-scan in that order.
    float bin = 0.f, incl = 0.f;
    if (threadIdx.x < 256)
      for (int s = 0; s < kBinSets; ++s) bin += bins[s][255 - threadIdx.x];
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
    z = above + suffix[i];
    above += i > 0 ? suffix[i - 1] : 0.f;  // mass of digits above the chosen one
    prefix |= static_cast<unsigned>(255 - i) << shift;
    __syncthreads();  // suffix, chosen and scan_temp are rewritten by the next pass
  }
  const unsigned theta_key = prefix;

  // ---- pass 6: inverse CDF in column order ------------------------------------------------------
  const float r = u[row_index] * z;

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
