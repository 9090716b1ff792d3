/* forgek
{
  "name": "planted_writes_nothing",
  "launches": [{"kernel": "planted", "grid": ["M"], "block": [256], "args": ["x", "y", "M", "N"]}]
}
*/
// Planted failure for softmax_fp32: returns at once. Expected outcome: wrong (every output keeps
// the NaN poison; were outputs not poisoned, it would also be faster than the speed of light).
extern "C" __global__ void planted(const float* __restrict__ x, float* __restrict__ y, int M, int N) {}
