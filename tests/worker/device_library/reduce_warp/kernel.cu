/* forgek
{
  "name": "reduce_warp_fk",
  "launches": [
    {"kernel": "reduce_warp_fk", "grid": ["ceil_div(R, 8)"], "block": [256],
     "args": ["xf", "xi", "sum", "max", "min", "lse", "lse4", "gsum", "amax", "amax8", "R"]}
  ]
}
*/
// One warp per row (lane j holds column j). Each result is written by a different lane than lane 0
// where it can be, so a reduction that leaves its result in lane 0 only fails.
#include <forgek/reduce.cuh>
#include <forgek/softmax.cuh>

extern "C" __global__ void __launch_bounds__(256)
reduce_warp_fk(const float* xf, const int* xi, float* sum, float* mx, float* mn, float* lse, float* lse4, float* gsum,
               int* amax, int* amax8, int R)
{
  const int lane = threadIdx.x % 32;
  const int r = blockIdx.x * 8 + threadIdx.x / 32;
  if (r >= R) return;  // whole warps leave together
  const float v = xf[(size_t)r * 32 + lane];
  const float s = fk::warp_sum(v);
  const float m = fk::warp_max(v);
  const float n = fk::warp_min(v);
  const float g = fk::warp_sum<8>(v);
  const fk::SoftmaxState st = fk::warp_softmax_merge(fk::SoftmaxState{v, 1.f});
  // softmax_absorb: lanes 4q absorb the row's values 4q .. 4q+3 into an empty state, the other lanes
  // stay empty; the merge over the warp then covers every value once.
  float quad[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) quad[k] = __shfl_sync(0xffffffffu, v, (lane & ~3) + k);
  const fk::SoftmaxState empty{fk::neg_inf(), 0.f};
  const fk::SoftmaxState st4 = fk::warp_softmax_merge(lane % 4 == 0 ? fk::softmax_absorb(empty, quad) : empty);
  float a = (float)xi[(size_t)r * 32 + lane];
  int ai = lane;
  fk::warp_argmax(a, ai);
  float b = (float)xi[(size_t)r * 32 + lane];
  int bi = lane;
  fk::warp_argmax<8>(b, bi);
  if (lane == 31) sum[r] = s;
  if (lane == 0) mx[r] = m;
  if (lane == 17) mn[r] = n;
  if (lane == 5) lse[r] = st.max + logf(st.sum);
  if (lane == 9) lse4[r] = st4.max + logf(st4.sum);
  if (lane == 30) amax[r] = ai;
  if (lane % 8 == 7) gsum[r * 4 + lane / 8] = g;
  if (lane % 8 == 3) amax8[r * 4 + lane / 8] = bi;
}
