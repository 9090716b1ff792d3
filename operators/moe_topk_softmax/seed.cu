/* forgek
{
  "name": "moe_topk_softmax_thread_per_token",
  "mechanisms": [],
  "params": {"THREADS": 128, "MAX_K": 8},
  "constraints": ["K <= MAX_K", "K <= E"],
  "launches": [
    {"kernel": "moe_topk_softmax_seed", "grid": ["ceil_div(T, THREADS)"], "block": ["THREADS"],
     "args": ["logits", "weights", "ids", "T", "E", "K"]}
  ]
}
*/
// A plain starting point: one thread per token. The full softmax of the row (max, sum of exps),
// then K selection rounds over the probabilities' logits, then the chosen probabilities
// renormalised. Ties go to the lower expert id (the scan keeps the first of equal logits).
// Correct for any T, E and K <= MAX_K. Left slow on purpose: each thread walks its own 512-byte row
// with scalar loads (a warp touches 32 rows at once: uncoalesced), reads the row K+2 times and
// computes E exps that the renormalisation cancels; one warp per token with float4 loads and
// shuffle reductions needs only the K exps.
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
moe_topk_softmax_seed(const float* __restrict__ logits,  // [T, E] row-major
                      float* __restrict__ weights,       // [T, K]
                      int* __restrict__ ids,             // [T, K]
                      int T, int E, int K) {
  const int t = blockIdx.x * THREADS + threadIdx.x;
  if (t >= T) return;
  const float* row = logits + static_cast<size_t>(t) * E;

  float row_max = row[0];
  for (int e = 1; e < E; ++e) row_max = fmaxf(row_max, row[e]);
  float row_sum = 0.f;
  for (int e = 0; e < E; ++e) row_sum += expf(row[e] - row_max);

  float picked_prob[MAX_K];
  float kept_sum = 0.f;
  float last_v = __int_as_float(0x7f800000);  // +inf at column -1: before every logit
  int last_j = -1;
  for (int k = 0; k < MAX_K && k < K; ++k) {
    float v = __int_as_float(0xff800000);
    int j = E;
    for (int e = 0; e < E; ++e)
      if (fk::argmax_before(last_v, last_j, row[e], e) && fk::argmax_before(row[e], e, v, j)) v = row[e], j = e;
    picked_prob[k] = expf(v - row_max) / row_sum;
    kept_sum += picked_prob[k];
    ids[static_cast<size_t>(t) * K + k] = j;
    last_v = v, last_j = j;
  }
  for (int k = 0; k < MAX_K && k < K; ++k) weights[static_cast<size_t>(t) * K + k] = picked_prob[k] / kept_sum;
}
