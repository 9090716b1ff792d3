/* forgek
{
  "name": "moe_topk_softmax_warp_per_token",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction", "register_row_cache"],
  "params": {"WARPS_PER_CTA": 4},
  "constraints": ["E == 128", "K <= 32"],
  "launches": [
    {"kernel": "moe_topk_softmax_reference", "grid": ["ceil_div(T, WARPS_PER_CTA)"], "block": ["32*WARPS_PER_CTA"],
     "args": ["logits", "weights", "ids", "T", "E", "K"]}
  ]
}
*/
// Expert MoE router for E = 128 experts: one warp per token, the 512-byte row read once with one
// float4 per lane (lane l holds experts 4l .. 4l+3) and kept in registers.
//   selection: K rounds of a warp argmax. Each lane offers its best not-yet-taken expert; a 5-step
//              xor butterfly leaves the winner (value desc, id asc) in every lane; the owner
//              marks it taken. Lane k keeps round k's pick.
//   weights:   only the K chosen exps are computed: exp(x_k - x_0) (x_0 is the round-0 pick, the
//              row max), summed over lanes < K by a butterfly and divided. The full-row softmax
//              denominator cancels in the renormalisation, so it is never computed.
//   output:    lanes < K store one weight and one id each (K*8 contiguous bytes per token).
// Rows are 512 bytes, so a 4-warp CTA streams 2 KiB; the whole problem is 8 MiB of reads,
// memory-bound; the K butterflies are the only latency on the path.
#include <forgek/reduce.cuh>


extern "C" __global__ void __launch_bounds__(32 * WARPS_PER_CTA)
moe_topk_softmax_reference(const float* __restrict__ logits,  // [T, 128] row-major
                           float* __restrict__ weights,       // [T, K]
                           int* __restrict__ ids,             // [T, K]
                           int T, int E, int K) {
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * WARPS_PER_CTA + threadIdx.x / 32;
  if (t >= T) return;  // whole warps leave together: t is uniform across a warp

  const float4 f = reinterpret_cast<const float4*>(logits + static_cast<size_t>(t) * E)[lane];
  float v[4] = {f.x, f.y, f.z, f.w};  // experts 4*lane + c
  unsigned taken = 0;                 // bit c: v[c] already chosen

  float my_value = 0.f;  // lane k < K: round k's logit and expert
  int my_id = 0;
  float top = 0.f;       // round 0's logit: the row max
  for (int k = 0; k < K; ++k) {
    float best = __int_as_float(0xff800000);  // -inf at id E: after every real logit
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
  float sum = e;
  sum = fk::warp_sum(sum);
  if (lane < K) {
    weights[static_cast<size_t>(t) * K + lane] = e / sum;
    ids[static_cast<size_t>(t) * K + lane] = my_id;
  }
}
