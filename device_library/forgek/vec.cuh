// forgek/vec.cuh: vector memory access with cache hints and bf16 packing (namespace fk). Pointers to 16-byte
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
//   float fk::absmax_bf16x8(const uint4& v)         — max |x| over 8 packed bf16 (exact), 0 for all zeros
//   uint4 fk::map_bf16x8(const uint4& v, f)         — f (float -> float) applied to each of 8 packed bf16 in fp32,
//        rounded back to bf16 (to nearest), element order kept
// Access types and cache-hinted loads / stores, for kernels whose width or hint is a param:
//   fk::Access<bytes>                               — the type moved by one access of 16, 8, 4 or 2 bytes:
//                                                     uint4, uint2, unsigned, unsigned short
//   fk::Floats<n>                                   — n floats as one access: float4, float2 or float (n = 4, 2, 1)
//   T fk::load<fk::LoadHint::h>(const T* p)         — one load of *p with the cache hint h:
//        plain (*p: the compiler's choice), nc (ld.global.nc, the read-only path, __ldg),
//        nc_na (ld.global.nc.L1::no_allocate), nc_na_l2_256 (the same with a 256-byte L2 prefetch; 16-byte T only),
//        cs (ld.global.cs, evict-first), cg (ld.global.cg, L2 only), lu (ld.global.lu, last use)
//   void fk::store<fk::StoreHint::h>(T* p, T v)     — one store with the hint h: plain (*p = v),
//        cs (st.global.cs, streaming), cg (st.global.cg, L2 only), wt (st.global.wt, write-through)
//        T: a type of CUDA's __ldg/__ldcs/__stcs overloads (uint4, uint2, unsigned, int, float4, float2, float, ...);
//        nc_na takes any T of 16, 8 or 4 bytes. A kernel maps its hint param to a hint once:
//        constexpr fk::LoadHint kLoadX = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::plain;
//   fk::FloatPack<n>                                — n floats (n = 1, 2, 4) as an array .v[n], aligned for one access
//   FloatPack<n> fk::load_floats<n, fk::LoadHint::h>(const float* p) — n floats by one hinted access (h defaults to plain)
//   void fk::store_floats<fk::StoreHint::h>(float* p, const FloatPack<n>& a) — n floats by one hinted store
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
// f applied to each of the 8 bf16 packed in v, in fp32, rounded back to bf16 (to nearest); f is any
// callable float -> float (a __device__ function or a lambda), inlined.
template <class F> FK_DEVICE uint4 map_bf16x8(const uint4& v, F f)
{
  float x[8];
  unpack_bf16x8(v, x);
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = f(x[k]);
  return pack_bf16x8(x);
}
// max |x| over 8 bf16 packed in 16 bytes (exact: fabsf and fmaxf never round); 0 for all zeros.
FK_DEVICE float absmax_bf16x8(const uint4& v)
{
  float f[8];
  unpack_bf16x8(v, f);
  float m = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) m = fmaxf(m, fabsf(f[k]));
  return m;
}

// ---- Access types and cache-hinted loads / stores ----

namespace detail {
template <int bytes> struct AccessOf;
template <> struct AccessOf<16> { using type = uint4; };
template <> struct AccessOf<8> { using type = uint2; };
template <> struct AccessOf<4> { using type = unsigned; };
template <> struct AccessOf<2> { using type = unsigned short; };
template <int n> struct FloatsOf;
template <> struct FloatsOf<4> { using type = float4; };
template <> struct FloatsOf<2> { using type = float2; };
template <> struct FloatsOf<1> { using type = float; };
}  // namespace detail

// The type one access of `bytes` bytes moves (bytes = 16, 8, 4, 2); a pointer to it must be that aligned.
template <int bytes> using Access = typename detail::AccessOf<bytes>::type;
// `n` floats moved as one access (n = 4, 2, 1).
template <int n> using Floats = typename detail::FloatsOf<n>::type;

// The cache behaviour of one global load: the ld.global qualifier it compiles to.
enum class LoadHint : int {
  plain,         // *p: an ordinary load (ld.global, or ld.global.nc where the compiler proves it read-only)
  nc,            // ld.global.nc: the read-only (texture) path, allocating in L1
  nc_na,         // ld.global.nc.L1::no_allocate: read-only, data read once (no L1 allocation)
  nc_na_l2_256,  // ld.global.nc.L1::no_allocate.L2::256B: the same, prefetching the 256-byte L2 neighbourhood
  cs,            // ld.global.cs: streaming, evict-first (lines read once leave L2 before others)
  cg,            // ld.global.cg: cached in L2 only (coherent across CTAs: data other CTAs wrote)
  lu,            // ld.global.lu: last use (the line may be evicted after the read)
};
// The cache behaviour of one global store: the st.global qualifier it compiles to.
enum class StoreHint : int {
  plain,  // *p = v: an ordinary write-back store
  cs,     // st.global.cs: streaming, evict-first (written once, not read back soon)
  cg,     // st.global.cg: cached in L2 only
  wt,     // st.global.wt: write-through to system memory
};

namespace detail {
// ld.global.nc.L1::no_allocate of 16, 8 and 4 bytes; other types of those sizes go through the bits.
FK_DEVICE uint4 ld_nc_na(const uint4* p) { return ld_global_nc_na(p); }
FK_DEVICE float4 ld_nc_na(const float4* p) { return ld_global_nc_na_f4(reinterpret_cast<const float*>(p)); }
FK_DEVICE uint2 ld_nc_na(const uint2* p)
{
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
FK_DEVICE unsigned ld_nc_na(const unsigned* p)
{
  unsigned v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}
template <class T> FK_DEVICE T ld_nc_na(const T* p)
{
  static_assert(sizeof(T) == 16 || sizeof(T) == 8 || sizeof(T) == 4, "fk::LoadHint::nc_na loads 16, 8 or 4 bytes");
  const Access<sizeof(T)> v = ld_nc_na(reinterpret_cast<const Access<sizeof(T)>*>(p));
  return *reinterpret_cast<const T*>(&v);
}
// ld.global.nc.L1::no_allocate.L2::256B of 16 bytes.
FK_DEVICE float4 ld_nc_na_l2_256(const float4* p) { return ld_global_nc_na_l2_256_f4(reinterpret_cast<const float*>(p)); }
template <class T> FK_DEVICE T ld_nc_na_l2_256(const T* p)
{
  static_assert(sizeof(T) == 16, "fk::LoadHint::nc_na_l2_256 loads 16 bytes");
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return *reinterpret_cast<const T*>(&v);
}
}  // namespace detail

// One load of *p with the cache hint `hint` (the ld qualifier above); p points to global memory for
// every hint but plain, aligned to sizeof(T). Any thread; `hint` is a compile-time constant.
template <LoadHint hint, class T> FK_DEVICE T load(const T* p)
{
  if constexpr (hint == LoadHint::plain) return *p;
  else if constexpr (hint == LoadHint::nc) return __ldg(p);
  else if constexpr (hint == LoadHint::nc_na) return detail::ld_nc_na(p);
  else if constexpr (hint == LoadHint::nc_na_l2_256) return detail::ld_nc_na_l2_256(p);
  else if constexpr (hint == LoadHint::cs) return __ldcs(p);
  else if constexpr (hint == LoadHint::cg) return __ldcg(p);
  else return __ldlu(p);
}
// One store of v to *p with the cache hint `hint` (the st qualifier above); p points to global memory
// for every hint but plain, aligned to sizeof(T). Any thread.
template <StoreHint hint, class T> FK_DEVICE void store(T* p, const T& v)
{
  if constexpr (hint == StoreHint::plain) *p = v;
  else if constexpr (hint == StoreHint::cs) __stcs(p, v);
  else if constexpr (hint == StoreHint::cg) __stcg(p, v);
  else __stwt(p, v);
}

// n consecutive floats as an indexable array, aligned so that one access moves them all.
template <int n> struct alignas(4 * n) FloatPack {
  float v[n];
};
// n floats at p (4n-byte aligned) by one access with the cache hint `hint`. Any thread.
template <int n, LoadHint hint = LoadHint::plain> FK_DEVICE FloatPack<n> load_floats(const float* p)
{
  if constexpr (hint == LoadHint::plain) return *reinterpret_cast<const FloatPack<n>*>(p);
  else {
    const Floats<n> t = load<hint>(reinterpret_cast<const Floats<n>*>(p));
    return *reinterpret_cast<const FloatPack<n>*>(&t);
  }
}
// n floats to p (4n-byte aligned) by one store with the cache hint `hint`. Any thread.
template <StoreHint hint, int n> FK_DEVICE void store_floats(float* p, const FloatPack<n>& a)
{
  if constexpr (hint == StoreHint::plain) *reinterpret_cast<FloatPack<n>*>(p) = a;
  else store<hint>(reinterpret_cast<Floats<n>*>(p), *reinterpret_cast<const Floats<n>*>(&a));
}

}  // namespace fk
