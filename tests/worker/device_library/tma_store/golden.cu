/* forgek
{
  "name": "tma_store_golden",
  "launches": [
    {"kernel": "tma_store_golden", "grid": ["ceil_div(R*64, 256)"], "block": [256], "args": ["x", "y2", "y3", "y4", "R"]}
  ]
}
*/
// The truth for the TMA store test, written without the device library.
extern "C" __global__ void tma_store_golden(const float* x, float* y2, float* y3, float* y4, int R)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= R * 64) return;
  y2[i] = x[i] + 1.0f;
  y3[i] = 2.0f * x[i];
  y4[i] = x[i] - 1.0f;
}
