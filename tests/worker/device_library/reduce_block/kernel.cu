/* forgek
{
  "name": "reduce_block_fk",
  "launches": [
    {"kernel": "reduce_block_warps", "grid": ["R"], "block": [96],
     "args": ["x", "bsum", "bmax", "bsum2", "bmax2", "N"]},
    {"kernel": "reduce_block_tree", "grid": ["R"], "block": [128],
     "args": ["x", "xi", "tsum", "tmax", "targ", "N"]}
  ]
}
*/
// One block per row. reduce_block_warps runs 3 warps (a block size that is a multiple of 32 but no
// power of two) through fk::block_sum / block_max, with caller scratch and with the internal
// scratch (called twice in a row); reduce_block_tree runs 128 threads through the shared-memory
// tree forms. Results are written by the last thread, so a result left in thread 0 only fails.
#include <forgek/reduce.cuh>

extern "C" __global__ void __launch_bounds__(96)
reduce_block_warps(const float* x, float* bsum, float* bmax, float* bsum2, float* bmax2, int N)
{
  __shared__ float scratch_sum[3], scratch_max[3];
  const float* f = x + (size_t)blockIdx.x * N;
  float s = 0.f, m = fk::neg_inf();
  for (int j = threadIdx.x; j < N; j += blockDim.x) s += f[j], m = fmaxf(m, f[j]);
  const float a = fk::block_sum(s, scratch_sum);
  const float b = fk::block_max(m, scratch_max);
  const float c = fk::block_sum(s);
  const float d = fk::block_max(m);
  if (threadIdx.x == blockDim.x - 1) {
    bsum[blockIdx.x] = a;
    bmax[blockIdx.x] = b;
    bsum2[blockIdx.x] = c;
    bmax2[blockIdx.x] = d;
  }
}

extern "C" __global__ void __launch_bounds__(128)
reduce_block_tree(const float* x, const int* xi, float* tsum, float* tmax, int* targ, int N)
{
  const float* f = x + (size_t)blockIdx.x * N;
  const int* q = xi + (size_t)blockIdx.x * N;
  float s = 0.f, m = fk::neg_inf(), v = fk::neg_inf();
  int i = N;
  for (int j = threadIdx.x; j < N; j += 128) {
    s += f[j];
    m = fmaxf(m, f[j]);
    if ((float)q[j] > v) v = (float)q[j], i = j;  // columns grow: strict > keeps the first
  }
  const float a = fk::block_sum_tree<128>(s);
  const float b = fk::block_max_tree<128>(m);
  fk::block_argmax_tree<128>(v, i);
  if (threadIdx.x == 127) {
    tsum[blockIdx.x] = a;
    tmax[blockIdx.x] = b;
    targ[blockIdx.x] = i;
  }
}
