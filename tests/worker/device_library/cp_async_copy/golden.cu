/* forgek
{
  "name": "cp_async_copy_golden",
  "launches": [
    {"kernel": "cp_async_copy_golden", "grid": ["ceil_div(R*64, 256)"], "block": [256], "args": ["x", "y", "R"]}
  ]
}
*/
// The truth for the cp.async test, written without the device library: one element per thread.
extern "C" __global__ void cp_async_copy_golden(const float* x, float* y, int R)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= R * 64) return;
  const int c = i % 64;
  const bool zero = c == 47 || c == 55 || c == 58 || c == 59 || c == 62 || c == 63;
  y[i] = zero ? 0.0f : x[i];
}
