/* forgek
{
  "name": "vec_copy_fk",
  "launches": [
    {"kernel": "vec_copy_fk", "grid": ["N / 8 / 256"], "block": [256],
     "args": ["xb", "xf", "yb", "yf", "yp", "N"]}
  ],
  "constraints": ["N % 2048 == 0"]
}
*/
// Thread t handles elements [8t, 8t+8) of every array (N a multiple of 8 * 256: no tail).
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

extern "C" __global__ void __launch_bounds__(256)
vec_copy_fk(const __nv_bfloat16* xb, const float* xf, __nv_bfloat16* yb, float* yf, __nv_bfloat16* yp, int N)
{
  const int i = (blockIdx.x * 256 + threadIdx.x) * 8;
  // bf16x8 (the 16-byte overloads of unpack_bf16 / pack_bf16): read-only no-allocate load, unpack,
  // double, pack, streaming store.
  float f[8];
  fk::unpack_bf16(fk::ld_global_nc_na(xb + i), f);
#pragma unroll
  for (int k = 0; k < 8; ++k) f[k] *= 2.0f;
  fk::st_global_cs(yb + i, fk::pack_bf16(f));
  // float4 x 2 through the three float loads and both float stores.
  const float4 a = fk::ld_global_nc_na_f4(xf + i);
  const float4 b = fk::ld_global_nc_na_l2_256_f4(xf + i + 4);
  const uint4 c = fk::ld_global_cs(xf + i);  // the same 16 bytes as a, as raw words
  const float4 a2 = make_float4(__uint_as_float(c.x), __uint_as_float(c.y), __uint_as_float(c.z), __uint_as_float(c.w));
  fk::st_global_cs_f4(yf + i, make_float4(0.5f * a2.x + 1.0f, 0.5f * a.y + 1.0f, 0.5f * a2.z + 1.0f, 0.5f * a.w + 1.0f));
  const float4 r = make_float4(0.5f * b.x + 1.0f, 0.5f * b.y + 1.0f, 0.5f * b.z + 1.0f, 0.5f * b.w + 1.0f);
  fk::st16(yf + i + 4, *reinterpret_cast<const uint4*>(&r));
  // bf16x4 (unpack_bf16x4, and pack_bf16x4 through the 8-byte overload): swap elements 2k and 2k+1
  // of each 8-byte half; bf16x2 for the word order inside it.
  uint4 w = fk::ld16(xb + i);
  uint2* halves = reinterpret_cast<uint2*>(&w);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float g[4];
    fk::unpack_bf16x4(halves[h], g);
    const float swapped[4] = {g[1], g[0], g[3], g[2]};
    halves[h] = fk::pack_bf16(swapped);
  }
  const float2 t = fk::unpack_bf16x2(w.x);  // elements 1 and 0 after the swap
  w.x = fk::pack_bf16x2(t.x, t.y);          // repacked unchanged: pack_bf16x2 inverts unpack_bf16x2
  fk::st16(yp + i, w);
}
