/* forgek
{
  "name": "planted_illegal_address",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: writes 64 GiB past the output. Expected outcome: crash
// (CUDA_ERROR_ILLEGAL_ADDRESS), and the worker is respawned for the next candidate.
extern "C" __global__ void planted(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  size_t far = size_t(1) << 34;
  if (threadIdx.x == 0) y[far + blockIdx.x] = x[blockIdx.x];
}
