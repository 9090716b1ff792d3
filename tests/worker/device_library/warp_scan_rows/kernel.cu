/* forgek
{
  "name": "warp_scan_rows_kernel",
  "launches": [
    {"kernel": "scan_segments", "grid": ["ceil_div(S, 4)"], "block": [128], "args": ["x", "y", "total", "S"]}
  ]
}
*/
// fk::warp_scan_float4_rows<4> on one warp per segment: x[s] = 4 rows x 32 lanes x float4.
#include <forgek/scan.cuh>

extern "C" __global__ void scan_segments(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ total,
                                         int S)
{
  const int seg = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (seg >= S) return;  // whole warps leave together
  const float4* src = reinterpret_cast<const float4*>(x + (size_t)seg * 512);
  float4* dst = reinterpret_cast<float4*>(y + (size_t)seg * 512);
  float4 v[4];
  float offset[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) v[k] = src[k * 32 + lane];  // row k, this lane's vector
  const float sum = fk::warp_scan_float4_rows<4>(v, offset);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    dst[k * 32 + lane] = make_float4(offset[k] + v[k].x, offset[k] + v[k].y, offset[k] + v[k].z, offset[k] + v[k].w);
  if (lane == 0) total[seg] = sum;
}
