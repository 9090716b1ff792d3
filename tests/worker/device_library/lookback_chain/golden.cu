/* forgek
{
  "name": "lookback_chain_golden",
  "workspaces": [{"name": "tile_sum", "bytes": "8*T"}],
  "launches": [
    {"kernel": "tile_sums", "grid": ["ceil_div(T, 256)"], "block": [256], "args": ["x", "tile_sum", "T"]},
    {"kernel": "scan_tile_sums", "grid": [1], "block": [1], "args": ["tile_sum", "y0", "y1", "T"]}
  ]
}
*/
// The truth for the look-back test, written without the device library: each tile's sum in fp64
// (one thread per tile), then one thread scans them in order.
extern "C" __global__ void tile_sums(const float* x, double* tile_sum, int T)
{
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T) return;
  double s = 0;
  for (int j = 0; j < 256; ++j) s += x[(size_t)t * 256 + j];
  tile_sum[t] = s;
}

extern "C" __global__ void scan_tile_sums(const double* tile_sum, float* y0, float* y1, int T)
{
  double s = 0;
  for (int t = 0; t < T; ++t) {
    s += tile_sum[t];
    y0[t] = (float)s;
    y1[t] = (float)s;
  }
}
