/* forgek
{
  "name": "radix_select_golden",
  "launches": [
    {"kernel": "first_k_by_scan", "grid": ["ceil_div(R, 64)"], "block": [64],
     "args": ["x", "values", "indices", "checks", "R", "N", "K"]}
  ]
}
*/
// The truth for the radix-select test, written without the device library: one thread per row
// takes, K times, the largest value not yet taken (the lowest column among equals).
extern "C" __global__ void first_k_by_scan(const float* x, float* values, int* indices, int* checks, int R, int N,
                                           int K)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* row = x + (size_t)r * N;
  float last_v = 0;
  int last_c = -1;
  for (int k = 0; k < K; ++k) {
    int best = -1;
    for (int c = 0; c < N; ++c) {
      // After (last_v, last_c) in (value desc, column asc) order.
      const bool after = last_c < 0 || row[c] < last_v || (row[c] == last_v && c > last_c);
      if (after && (best < 0 || row[c] > row[best])) best = c;
    }
    values[(size_t)r * K + k] = row[best];
    indices[(size_t)r * K + k] = best;
    last_v = row[best];
    last_c = best;
  }
  checks[2 * r] = 1;
  checks[2 * r + 1] = 1;
}
