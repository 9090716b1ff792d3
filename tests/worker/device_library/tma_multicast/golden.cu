/* forgek
{
  "name": "tma_multicast_golden",
  "launches": [
    {"kernel": "copy_golden", "grid": ["ceil_div(R*64, 256)"], "block": [256], "args": ["x", "y", "R"]}
  ]
}
*/
// The truth for the TMA multicast test, written without the device library: a plain copy.
extern "C" __global__ void copy_golden(const float* x, float* y, int R)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < R * 64) y[i] = x[i];
}
