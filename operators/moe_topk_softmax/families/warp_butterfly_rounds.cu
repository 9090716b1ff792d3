/* forgek
{
  "name": "moe_topk_softmax_warp_butterfly_rounds",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction", "register_row_cache", "memory_level_parallelism"],
  "controls": {"block_size": ["WARPS_PER_CTA"], "memory_level_parallelism": ["TOKENS_PER_WARP"],
               "cache_hint": ["LOAD_HINT"]},
  "params": {"WARPS_PER_CTA": [4, 8, 16, 2], "TOKENS_PER_WARP": [1, 2, 4], "LOAD_HINT": [0, 1]},
  "let": {"tokens_per_cta": "WARPS_PER_CTA*TOKENS_PER_WARP"},
  "constraints": ["E == 128", "K <= 32"],
  "launches": [
    {"kernel": "moe_topk_softmax_warp_butterfly_rounds", "grid": ["ceil_div(T, tokens_per_cta)"],
     "block": ["32*WARPS_PER_CTA"], "args": ["logits", "weights", "ids", "T", "E", "K"]}
  ]
}
*/
// The reference's design with its knobs as params: one warp per token, the 512-byte row of E = 128
// logits held in registers as one float4 per lane, K rounds of a warp argmax by xor butterfly.
//   CTA b       -> tokens b*WARPS_PER_CTA*TOKENS_PER_WARP ... (WARPS_PER_CTA warps)
//   warp w      -> TOKENS_PER_WARP consecutive tokens, all their rows loaded before the first round
//                  (TOKENS_PER_WARP*512 bytes in flight per warp), then processed one after another
//   lane l      -> experts 4l .. 4l+3 of each of its tokens (one 16-byte load per token)
// Round k: each lane offers its best not-yet-taken expert (value desc, id asc), a 5-step butterfly
// of (value, id) pairs leaves the winner in every lane, the owner marks it taken, lane k keeps it.
// Weights: only the K chosen exps, exp(x_k - x_0), summed over lanes < K and divided: the full-row
// softmax denominator cancels in the renormalisation. Lanes < K store one weight and one id each.
// LOAD_HINT: 0 plain ld.global, 1 ld.global.nc.L1::no_allocate (the row is read once).
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// The row is read once: LOAD_HINT 1 skips L1, 0 plain loads.
constexpr fk::LoadHint kLoadRow = LOAD_HINT == 1 ? fk::LoadHint::nc_na : fk::LoadHint::plain;

extern "C" __global__ void __launch_bounds__(kWarp * WARPS_PER_CTA)
moe_topk_softmax_warp_butterfly_rounds(const float* __restrict__ logits,  // [T, 128] row-major
                                       float* __restrict__ weights,       // [T, K]
                                       int* __restrict__ ids,             // [T, K]
                                       int T, int E, int K) {
  const int lane = threadIdx.x % kWarp;
  const int first = (blockIdx.x * WARPS_PER_CTA + threadIdx.x / kWarp) * TOKENS_PER_WARP;
  if (first >= T) return;  // whole warps leave together: `first` is uniform across a warp

  // [TOKENS_PER_WARP] float4 per lane: every load issued before the first selection round.
  float4 quad[TOKENS_PER_WARP];
#pragma unroll
  for (int j = 0; j < TOKENS_PER_WARP; ++j)
    if (first + j < T)
      quad[j] = fk::load<kLoadRow>(reinterpret_cast<const float4*>(logits + static_cast<size_t>(first + j) * E) + lane);

#pragma unroll
  for (int j = 0; j < TOKENS_PER_WARP; ++j) {
    const int t = first + j;
    if (t >= T) break;  // uniform across the warp
    const float v[4] = {quad[j].x, quad[j].y, quad[j].z, quad[j].w};  // experts 4*lane + c
    unsigned taken = 0;                                               // bit c: v[c] already chosen
    float my_value = 0.f;  // lane k < K: round k's logit and expert
    int my_id = 0;
    float top = 0.f;       // round 0's logit: the row max
    for (int k = 0; k < K; ++k) {
      float best = fk::neg_inf();  // -inf at id E: after every real logit
      int best_id = E;
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (!(taken >> c & 1u) && fk::argmax_before(v[c], 4 * lane + c, best, best_id))
          best = v[c], best_id = 4 * lane + c;
      fk::warp_argmax(best, best_id);
      if (best_id / 4 == lane) taken |= 1u << (best_id % 4);
      if (k == lane) my_value = best, my_id = best_id;
      if (k == 0) top = best;
    }
    const float e = lane < K ? __expf(my_value - top) : 0.f;
    const float sum = fk::warp_sum(e);
    if (lane < K) {
      weights[static_cast<size_t>(t) * K + lane] = e / sum;
      ids[static_cast<size_t>(t) * K + lane] = my_id;
    }
  }
}
