/* forgek
{
  "name": "vec_hints_fk",
  "launches": [
    {"kernel": "vec_hints_fk", "grid": ["N / 8 / 256"], "block": [256],
     "args": ["xb", "xf", "yf", "yp", "yb", "yh", "yq", "ym", "N"]}
  ],
  "constraints": ["N % 2048 == 0"]
}
*/
// Thread t handles elements [8t, 8t+8) of every array (N a multiple of 8 * 256: no tail). Each
// group of 8 is split over accesses of every width, so that every load and store hint moves data.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/fp8.cuh>
#include <forgek/vec.cuh>

using fk::LoadHint;
using fk::StoreHint;

extern "C" __global__ void __launch_bounds__(256)
vec_hints_fk(const __nv_bfloat16* xb, const float* xf, float* yf, float* yp, __nv_bfloat16* yb, __nv_bfloat16* yh,
             __nv_fp8_e4m3* yq, float* ym, int N)
{
  const int t = blockIdx.x * 256 + threadIdx.x;
  const int i = 8 * t;

  // yf = 0.5 xf + 1 through fk::load / fk::store: a float4 (nc_na_l2_256 -> cs), a float2 (lu -> wt),
  // two floats (cg -> cg, nc -> plain).
  const float4 a = fk::load<LoadHint::nc_na_l2_256>(reinterpret_cast<const fk::Floats<4>*>(xf + i));
  const float2 b = fk::load<LoadHint::lu>(reinterpret_cast<const fk::Floats<2>*>(xf + i + 4));
  const float c = fk::load<LoadHint::cg>(xf + i + 6);
  const float d = fk::load<LoadHint::nc>(xf + i + 7);
  fk::store<StoreHint::cs>(reinterpret_cast<float4*>(yf + i),
                           make_float4(0.5f * a.x + 1.0f, 0.5f * a.y + 1.0f, 0.5f * a.z + 1.0f, 0.5f * a.w + 1.0f));
  fk::store<StoreHint::wt>(reinterpret_cast<float2*>(yf + i + 4), make_float2(0.5f * b.x + 1.0f, 0.5f * b.y + 1.0f));
  fk::store<StoreHint::cg>(yf + i + 6, 0.5f * c + 1.0f);
  fk::store<StoreHint::plain>(yf + i + 7, 0.5f * d + 1.0f);

  // yp = 3 xf through FloatPack: 4 floats (plain -> plain), 2 (nc_na, a float2 through its bits -> cs),
  // 1 (cs -> cg), 1 (nc -> wt).
  fk::FloatPack<4> p4 = fk::load_floats<4>(xf + i);
  fk::FloatPack<2> p2 = fk::load_floats<2, LoadHint::nc_na>(xf + i + 4);
  fk::FloatPack<1> p1 = fk::load_floats<1, LoadHint::cs>(xf + i + 6);
  fk::FloatPack<1> q1 = fk::load_floats<1, LoadHint::nc>(xf + i + 7);
#pragma unroll
  for (int k = 0; k < 4; ++k) p4.v[k] *= 3.0f;
  p2.v[0] *= 3.0f, p2.v[1] *= 3.0f, p1.v[0] *= 3.0f, q1.v[0] *= 3.0f;
  fk::store_floats<StoreHint::plain>(yp + i, p4);
  fk::store_floats<StoreHint::cs>(yp + i + 4, p2);
  fk::store_floats<StoreHint::cg>(yp + i + 6, p1);
  fk::store_floats<StoreHint::wt>(yp + i + 7, q1);

  // yb = 2 xb through Access<8> (cs -> cs), Access<4> (nc_na -> cg) and two Access<2> (nc -> wt,
  // plain -> plain).
  const fk::Access<8> h = fk::load<LoadHint::cs>(reinterpret_cast<const fk::Access<8>*>(xb + i));
  float f[4];
  fk::unpack_bf16x4(h, f);
#pragma unroll
  for (int k = 0; k < 4; ++k) f[k] *= 2.0f;
  fk::store<StoreHint::cs>(reinterpret_cast<fk::Access<8>*>(yb + i), fk::pack_bf16x4(f));
  const float2 w = fk::unpack_bf16x2(fk::load<LoadHint::nc_na>(reinterpret_cast<const fk::Access<4>*>(xb + i + 4)));
  fk::store<StoreHint::cg>(reinterpret_cast<fk::Access<4>*>(yb + i + 4), fk::pack_bf16x2(2.0f * w.x, 2.0f * w.y));
  const fk::Access<2> e6 = fk::load<LoadHint::nc>(reinterpret_cast<const fk::Access<2>*>(xb + i + 6));
  const fk::Access<2> e7 = fk::load<LoadHint::plain>(reinterpret_cast<const fk::Access<2>*>(xb + i + 7));
  const fk::Access<2> d6 = __bfloat16_as_ushort(__float2bfloat16(2.0f * __bfloat162float(__ushort_as_bfloat16(e6))));
  const fk::Access<2> d7 = __bfloat16_as_ushort(__float2bfloat16(2.0f * __bfloat162float(__ushort_as_bfloat16(e7))));
  fk::store<StoreHint::wt>(reinterpret_cast<fk::Access<2>*>(yb + i + 6), d6);
  fk::store<StoreHint::plain>(reinterpret_cast<fk::Access<2>*>(yb + i + 7), d7);

  // The whole group as one Access<16> (nc_na_l2_256 on uint4): its squares (map_bf16x8 with a lambda),
  // its absmax, and its e4m3 quantization at scale 64.
  const fk::Access<16> x8 = fk::load<LoadHint::nc_na_l2_256>(reinterpret_cast<const fk::Access<16>*>(xb + i));
  fk::store<StoreHint::plain>(reinterpret_cast<uint4*>(yh + i), fk::map_bf16x8(x8, [](float v) { return v * v; }));
  ym[t] = fk::absmax_bf16x8(x8);
  fk::store<StoreHint::plain>(reinterpret_cast<uint2*>(yq + i), fk::quantize_e4m3x8(x8, 64.0f));
}
