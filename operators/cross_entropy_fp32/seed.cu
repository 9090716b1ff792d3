/* forgek
{
  "name": "cross_entropy_block_two_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "cross_entropy_seed", "grid": ["T"], "block": ["THREADS"], "args": ["logits", "targets", "loss", "T", "V"]}
  ]
}
*/
// A plain starting point: one CTA of THREADS threads per token, two passes over the row.
//   pass 1: row max                         (reads the row)
//   pass 2: sum of exp(x - max)             (reads it again)
//   loss = max + log(sum) - x[target]
// Scalar 4-byte loads, shared-memory tree reductions, accurate expf/logf. Correct for any T, V.
// Left slow on purpose: the 513 KB row is read twice (an online max/sum reads it once) and scalar
// loads keep few bytes in flight.
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
cross_entropy_seed(const float* __restrict__ logits,  // [T, V] row-major
                   const int* __restrict__ targets,   // [T]
                   float* __restrict__ loss,          // [T]
                   int T, int V) {
  const int t = blockIdx.x;
  if (t >= T) return;
  const float* row = logits + static_cast<size_t>(t) * V;

  float local_max = __int_as_float(0xff800000);  // -inf
  for (int j = threadIdx.x; j < V; j += THREADS) local_max = fmaxf(local_max, row[j]);
  const float row_max = fk::block_max_tree<THREADS>(local_max);

  float local_sum = 0.f;
  for (int j = threadIdx.x; j < V; j += THREADS) local_sum += expf(row[j] - row_max);
  const float row_sum = fk::block_sum_tree<THREADS>(local_sum);

  if (threadIdx.x == 0) loss[t] = row_max + logf(row_sum) - row[targets[t]];
}
