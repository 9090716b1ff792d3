/* forgek
{
  "name": "reduce_warp_golden",
  "launches": [
    {"kernel": "reduce_warp_golden", "grid": ["ceil_div(R, 128)"], "block": [128],
     "args": ["xf", "xi", "sum", "max", "min", "lse", "lse4", "gsum", "amax", "amax8", "R"]}
  ]
}
*/
// The truth for the warp-reduction test, written without the device library: one thread per row.
extern "C" __global__ void reduce_warp_golden(const float* xf, const int* xi, float* sum, float* mx, float* mn,
                                              float* lse, float* lse4, float* gsum, int* amax, int* amax8, int R)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* f = xf + (size_t)r * 32;
  const int* q = xi + (size_t)r * 32;
  float s = 0.f, m = f[0], n = f[0];
  for (int j = 0; j < 32; ++j) {
    s += f[j];
    m = fmaxf(m, f[j]);
    n = fminf(n, f[j]);
  }
  float e = 0.f;
  for (int j = 0; j < 32; ++j) e += expf(f[j] - m);
  sum[r] = s;
  mx[r] = m;
  mn[r] = n;
  lse[r] = m + logf(e);
  lse4[r] = m + logf(e);
  int best = 0;
  for (int j = 1; j < 32; ++j)
    if (q[j] > q[best]) best = j;
  amax[r] = best;
  for (int g = 0; g < 4; ++g) {
    float t = 0.f;
    int b = 8 * g;
    for (int j = 8 * g; j < 8 * g + 8; ++j) {
      t += f[j];
      if (q[j] > q[b]) b = j;
    }
    gsum[r * 4 + g] = t;
    amax8[r * 4 + g] = b;
  }
}
