/* forgek
{
  "name": "warp_scan_rows_golden",
  "launches": [
    {"kernel": "scan_segments_fp64", "grid": ["ceil_div(S, 128)"], "block": [128], "args": ["x", "y", "total", "S"]}
  ]
}
*/
// The truth for the warp scan test, written without the device library: one thread per segment
// scans its 512 values in order in fp64.
extern "C" __global__ void scan_segments_fp64(const float* x, float* y, float* total, int S)
{
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= S) return;
  double acc = 0;
  for (int j = 0; j < 512; ++j) {
    acc += x[(size_t)s * 512 + j];
    y[(size_t)s * 512 + j] = (float)acc;
  }
  total[s] = (float)acc;
}
