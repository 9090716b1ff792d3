/* forgek
{
  "name": "planted_infinite_loop",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: never returns. Expected outcome: timeout (the watchdog kills
// the worker), and the next candidate is served by a fresh worker.
extern "C" __global__ void planted(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  volatile float* out = y;
  for (unsigned long long i = 0;; ++i) out[threadIdx.x] = static_cast<float>(i);
}
