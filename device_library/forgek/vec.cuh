// forgek/vec.cuh: 16-byte vector memory access and bf16 packing (namespace fk). Pointers to 16-byte
// accesses must be 16-byte aligned and (for the ld/st_global_* forms) point to global memory.
//   uint4 fk::ld_global_nc_na(const void* p)        — ld.global.nc.L1::no_allocate.v4: read-only, skips L1
//   float4 fk::ld_global_nc_na_f4(const float* p)   — the same as a float4
//   float4 fk::ld_global_nc_na_l2_256_f4(const float* p) — the same with a 256-byte L2 prefetch
//   uint4 fk::ld_global_cs(const void* p)           — ld.global.cs.v4: streaming (evict-first) load
//   void fk::st_global_cs(void* p, uint4 v)         — st.global.cs.v4: streaming store (write once, never read back)
//   void fk::st_global_cs_f4(float* p, float4 v)    — the same for a float4
//   uint4 fk::ld16(const void* p) / void fk::st16(void* p, uint4 v) — plain 16-byte load / store (any space)
//   unsigned fk::pack_bf16x2(float lo, float hi)    — two floats -> bf16x2 (round to nearest), lo in the low half
//   float2 fk::unpack_bf16x2(unsigned v)            — bf16x2 -> (low, high) floats
//   void fk::unpack_bf16x8(const uint4& v, float (&f)[8]) — 8 packed bf16 -> 8 floats, element order kept
//   uint4 fk::pack_bf16x8(const float (&f)[8])      — 8 floats -> 8 packed bf16 (round to nearest)
//   void fk::unpack_bf16x4(const uint2& v, float (&f)[4]) / uint2 fk::pack_bf16x4(const float (&f)[4]) — 8-byte forms
//   fk::unpack_bf16(v, f) / fk::pack_bf16(f)        — either width by overload (uint4 <-> float[8], uint2 <-> float[4]),
//        for code templated on its vector width
#pragma once
#include <cuda_bf16.h>
#include <forgek/common.cuh>

namespace fk {

// 16 bytes through the read-only path without allocating in L1 (data read once, not written by the kernel).
FK_DEVICE uint4 ld_global_nc_na(const void* p)
{
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
// 4 floats through the read-only path without allocating in L1.
FK_DEVICE float4 ld_global_nc_na_f4(const float* p)
{
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}
// 4 floats through the read-only path without L1 allocation, prefetching the 256-byte L2 neighbourhood.
FK_DEVICE float4 ld_global_nc_na_l2_256_f4(const float* p)
{
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}
// 16 bytes with the streaming (evict-first) cache policy.
FK_DEVICE uint4 ld_global_cs(const void* p)
{
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
// 16-byte streaming store: the line is not expected to be read again soon.
FK_DEVICE void st_global_cs(void* p, uint4 v)
{
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
// 4-float streaming store.
FK_DEVICE void st_global_cs_f4(float* p, float4 v)
{
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
// Plain 16-byte load (generic address, 16-byte aligned).
FK_DEVICE uint4 ld16(const void* p) { return *reinterpret_cast<const uint4*>(p); }
// Plain 16-byte store (generic address, 16-byte aligned).
FK_DEVICE void st16(void* p, uint4 v) { *reinterpret_cast<uint4*>(p) = v; }

// bf16x2 of (lo, hi), rounded to nearest; lo in the low 16 bits (the element at the lower address).
FK_DEVICE unsigned pack_bf16x2(float lo, float hi)
{
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&v);
}
// (low, high) halves of a bf16x2 as floats (exact).
FK_DEVICE float2 unpack_bf16x2(unsigned v) { return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v)); }

// 8 bf16 packed in 16 bytes -> 8 floats, element order kept.
FK_DEVICE void unpack_bf16x8(const uint4& v, float (&f)[8])
{
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 t = __bfloat1622float2(h[k]);
    f[2 * k] = t.x;
    f[2 * k + 1] = t.y;
  }
}
// 8 floats -> 8 bf16 packed in 16 bytes, rounded to nearest.
FK_DEVICE uint4 pack_bf16x8(const float (&f)[8])
{
  uint4 v;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
  for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
  return v;
}
// 4 bf16 packed in 8 bytes -> 4 floats, element order kept.
FK_DEVICE void unpack_bf16x4(const uint2& v, float (&f)[4])
{
  const float2 lo = unpack_bf16x2(v.x), hi = unpack_bf16x2(v.y);
  f[0] = lo.x, f[1] = lo.y, f[2] = hi.x, f[3] = hi.y;
}
// 4 floats -> 4 bf16 packed in 8 bytes, rounded to nearest.
FK_DEVICE uint2 pack_bf16x4(const float (&f)[4]) { return make_uint2(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3])); }
// The same by overload on the vector width.
FK_DEVICE void unpack_bf16(const uint4& v, float (&f)[8]) { unpack_bf16x8(v, f); }
FK_DEVICE void unpack_bf16(const uint2& v, float (&f)[4]) { unpack_bf16x4(v, f); }
FK_DEVICE uint4 pack_bf16(const float (&f)[8]) { return pack_bf16x8(f); }
FK_DEVICE uint2 pack_bf16(const float (&f)[4]) { return pack_bf16x4(f); }

}  // namespace fk
