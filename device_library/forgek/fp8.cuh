// forgek/fp8.cuh: bf16 -> fp8 e4m3 packing for quantizing kernels (namespace fk).
//   uint2 fk::quantize_e4m3x8(const uint4& v, float s) — 8 packed bf16 times s -> 8 e4m3 bytes (rounded to nearest
//        even, saturated to +-448: cvt.rn.satfinite), element order kept; the bf16 of the lower address in the low byte
#pragma once
#include <cuda_fp8.h>
#include <forgek/vec.cuh>

namespace fk {

// 8 bf16 (16 bytes) scaled by s, converted to e4m3 with saturation and packed into 8 bytes in element
// order. The products are formed in fp32 (one rounding to e4m3). Any thread.
FK_DEVICE uint2 quantize_e4m3x8(const uint4& v, float s)
{
  float f[8];
  unpack_bf16x8(v, f);
  unsigned pair[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    pair[k] = __nv_cvt_float2_to_fp8x2(make_float2(f[2 * k] * s, f[2 * k + 1] * s), __NV_SATFINITE, __NV_E4M3);
  return make_uint2(pair[0] | (pair[1] << 16), pair[2] | (pair[3] << 16));
}

}  // namespace fk
