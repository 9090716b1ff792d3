// forgek/scan.cuh: prefix sums inside a warp (namespace fk).
//   float fk::warp_scan_float4_rows<Rows>(float4 (&v)[Rows], float (&offset)[Rows]) — a warp's segment of
//        32*Rows float4 vectors, lane l holding vectors l, l+32, ..., l+32*(Rows-1) (row k = vectors
//        32k .. 32k+31, each row a coalesced 512-byte access): scans every vector in place (v.y += v.x, ...),
//        sets offset[k] to the sum of the segment before this lane's vector of row k, and returns the sum
//        of the whole segment, the same in every lane. All 32 lanes call it. fp32, summed row by row.
#pragma once
#include <forgek/common.cuh>

namespace fk {

// The inclusive scan of a warp segment of float4 rows; see the header.
template <int Rows>
FK_DEVICE float warp_scan_float4_rows(float4 (&v)[Rows], float (&offset)[Rows])
{
  const int lane = threadIdx.x % 32;
  float carry = 0.f;  // sum of rows 0..k-1 of the segment (the same in every lane)
#pragma unroll
  for (int k = 0; k < Rows; ++k) {
    v[k].y += v[k].x;  // inclusive scan inside the float4
    v[k].z += v[k].y;
    v[k].w += v[k].z;
    float inclusive = v[k].w;  // -> sum of row k up to and including this lane's vector
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const float other = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += other;
    }
    const float lower = __shfl_up_sync(0xffffffffu, inclusive, 1);  // lanes 0..l-1 of row k
    offset[k] = carry + (lane == 0 ? 0.f : lower);
    carry += __shfl_sync(0xffffffffu, inclusive, 31);
  }
  return carry;
}

}  // namespace fk
