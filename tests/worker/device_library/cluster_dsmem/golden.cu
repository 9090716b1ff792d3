/* forgek
{
  "name": "cluster_dsmem_golden",
  "launches": [
    {"kernel": "cluster_dsmem_golden", "grid": ["R"], "block": [128], "args": ["x", "y", "z", "w", "ranks"]}
  ]
}
*/
// The truth for the cluster test, written without the device library: block b, thread j.
extern "C" __global__ void cluster_dsmem_golden(const float* x, float* y, float* z, int* w, int* ranks)
{
  const int b = blockIdx.x, j = threadIdx.x;
  const int c = b - b % 4, s = b % 4;
  y[b * 128 + j] = x[(c + (s + 1) % 4) * 128 + j];
  if (j == 0) {
    z[b] = x[(c + (s + 3) % 4) * 128];
    w[b] = (s + 3) % 4;
    ranks[2 * b] = s;
    ranks[2 * b + 1] = 4;
  }
}
