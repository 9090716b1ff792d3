/* forgek
{
  "name": "reduce_block_golden",
  "launches": [
    {"kernel": "reduce_block_golden", "grid": ["ceil_div(R, 128)"], "block": [128],
     "args": ["x", "xi", "bsum", "bmax", "bsum2", "bmax2", "tsum", "tmax", "targ", "R", "N"]}
  ]
}
*/
// The truth for the block-reduction test, written without the device library: one thread per row.
extern "C" __global__ void reduce_block_golden(const float* x, const int* xi, float* bsum, float* bmax, float* bsum2,
                                               float* bmax2, float* tsum, float* tmax, int* targ, int R, int N)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* f = x + (size_t)r * N;
  const int* q = xi + (size_t)r * N;
  float s = 0.f, m = f[0];
  int best = 0;
  for (int j = 0; j < N; ++j) {
    s += f[j];
    m = fmaxf(m, f[j]);
    if (q[j] > q[best]) best = j;
  }
  bsum[r] = s, bsum2[r] = s, tsum[r] = s;
  bmax[r] = m, bmax2[r] = m, tmax[r] = m;
  targ[r] = best;
}
