/* forgek
{
  "name": "tma_load_golden",
  "launches": [
    {"kernel": "copy3_golden", "grid": ["ceil_div(R*64, 256)"], "block": [256], "args": ["x", "y2", "y3", "y4", "R"]}
  ]
}
*/
// The truth for the TMA load test, written without the device library: three plain copies.
extern "C" __global__ void copy3_golden(const float* x, float* y2, float* y3, float* y4, int R)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= R * 64) return;
  y2[i] = x[i];
  y3[i] = x[i];
  y4[i] = x[i];
}
