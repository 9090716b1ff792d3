/* forgek
{
  "name": "cp_async_copy_fk",
  "launches": [
    {"kernel": "cp_async_copy_fk", "grid": ["R"], "block": [32], "args": ["x", "y"]}
  ]
}
*/
// One warp per row of 64 floats (256 B), copied global -> shared with every cp.async form:
//   floats  0-15  cg 16 B       (lanes 0-3)     floats 16-31  ca 16 B      (lanes 4-7), group 1
//   floats 32-47  ca 8 B        (lanes 8-15; lane 15 copies 4 of its 8 bytes: float 47 = 0)
//   floats 48-55  ca 4 B        (lanes 16-23; lane 23 copies 0 bytes: float 55 = 0)
//   floats 56-63  cg 16 B with src_bytes 8 (lanes 24-25: floats 58, 59, 62, 63 = 0), group 2
// then the shared row is written to y.
#include <forgek/cp_async.cuh>

extern "C" __global__ void __launch_bounds__(32) cp_async_copy_fk(const float* x, float* y)
{
  __shared__ __align__(16) float row[64];
  const int lane = threadIdx.x;
  const float* src = x + (size_t)blockIdx.x * 64;
  if (lane < 4) fk::cp_async_cg_16(row + 4 * lane, src + 4 * lane);
  else if (lane < 8) fk::cp_async_ca<16>(row + 4 * lane, src + 4 * lane);
  fk::cp_async_commit();
  if (lane >= 8 && lane < 15) fk::cp_async_ca<8>(row + 32 + 2 * (lane - 8), src + 32 + 2 * (lane - 8));
  else if (lane == 15) fk::cp_async_ca<8>(row + 46, src + 46, 4);
  else if (lane >= 16 && lane < 23) fk::cp_async_ca<4>(row + 48 + (lane - 16), src + 48 + (lane - 16));
  else if (lane == 23) fk::cp_async_ca<4>(row + 55, src + 55, 0);
  else if (lane == 24 || lane == 25) fk::cp_async_cg_16(row + 56 + 4 * (lane - 24), src + 56 + 4 * (lane - 24), 8);
  fk::cp_async_commit();
  fk::cp_async_wait<1>();  // group 1 landed (this thread's copies)
  fk::cp_async_wait_all();
  __syncthreads();
  float* dst = y + (size_t)blockIdx.x * 64;
  dst[lane] = row[lane];
  dst[lane + 32] = row[lane + 32];
}
