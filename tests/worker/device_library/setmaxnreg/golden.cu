/* forgek
{
  "name": "setmaxnreg_golden",
  "launches": [
    {"kernel": "axpb_golden", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "N"]}
  ]
}
*/
// The truth for the setmaxnreg test, written without the device library.
extern "C" __global__ void axpb_golden(const float* x, float* y, int N)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = 3.0f * x[i] + 1.0f;
}
