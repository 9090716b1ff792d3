/* forgek
{
  "name": "setmaxnreg_fk",
  "archs": ["sm90"],
  "launches": [
    {"kernel": "setmaxnreg_fk", "grid": [132], "block": [384], "args": ["x", "y", "N"]}
  ]
}
*/
// 384 threads = 3 warpgroups, as in the warp-specialised gemm families: warpgroup 0 lowers its limit
// to 40 registers per thread, warpgroups 1 and 2 raise theirs to 232 (128*40 + 256*232 <= 65536), then
// every thread takes a grid-strided share of y = 3x + 1.
#include <forgek/wgmma.cuh>

extern "C" __global__ void __launch_bounds__(384, 1) setmaxnreg_fk(const float* x, float* y, int N)
{
  if (threadIdx.x / 128 == 0) fk::warpgroup_reg_dealloc<40>();
  else fk::warpgroup_reg_alloc<232>();
  for (int i = blockIdx.x * 384 + threadIdx.x; i < N; i += gridDim.x * 384) y[i] = 3.0f * x[i] + 1.0f;
}
