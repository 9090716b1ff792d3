/* forgek
{
  "name": "moe_topk_softmax_golden",
  "params": {"THREADS": 128},
  "launches": [
    {"kernel": "moe_topk_softmax_golden", "grid": ["ceil_div(T, THREADS)"], "block": ["THREADS"],
     "args": ["logits", "weights", "ids", "T", "E", "K"]}
  ]
}
*/
// The truth for moe_topk_softmax: one thread per token, weights in fp64.
//   selection: K rounds over the E logits; round k takes the first logit in (value descending,
//              column ascending) order that comes after round k-1's pick (exact in any precision);
//   weights:   exp(x_k - x_0) / sum of the K exps, in fp64, rounded once to fp32.
// K is small (8), so the rounds and the picks kept in the output buffers are cheap.

__device__ bool before(float v, int j, float w, int k) { return v > w || (v == w && j < k); }

extern "C" __global__ void __launch_bounds__(THREADS)
moe_topk_softmax_golden(const float* __restrict__ logits,  // [T, E] row-major
                        float* __restrict__ weights,       // [T, K]
                        int* __restrict__ ids,             // [T, K]
                        int T, int E, int K) {
  const int t = blockIdx.x * THREADS + threadIdx.x;
  if (t >= T) return;
  const float* row = logits + static_cast<size_t>(t) * E;
  int* out_ids = ids + static_cast<size_t>(t) * K;
  float* out_weights = weights + static_cast<size_t>(t) * K;

  float last_v = __int_as_float(0x7f800000);  // +inf at column -1: before every logit
  int last_j = -1;
  for (int k = 0; k < K; ++k) {
    float v = __int_as_float(0xff800000);  // -inf at column E: after every logit
    int j = E;
    for (int e = 0; e < E; ++e)
      if (before(last_v, last_j, row[e], e) && before(row[e], e, v, j)) v = row[e], j = e;
    out_ids[k] = j;
    last_v = v, last_j = j;
  }

  const double top = row[out_ids[0]];
  double sum = 0.0;
  for (int k = 0; k < K; ++k) sum += exp(static_cast<double>(row[out_ids[k]]) - top);
  for (int k = 0; k < K; ++k) out_weights[k] = static_cast<float>(exp(static_cast<double>(row[out_ids[k]]) - top) / sum);
}
