// forgek/common.cuh: basics the other headers build on (namespace fk, macros FK_). The library's own
// names are lower_case or CamelCase, so UPPER_CASE candidate params (-DBM=128) cannot clash with them.
//   FK_DEVICE                                  — __device__ __forceinline__
//   CUtensorMap                                — the opaque 128-byte TMA descriptor type (skipped if
//                                                FORGEK_CUTENSORMAP_DEFINED is defined: define it if you declare your own)
//   int fk::ceil_div(int a, int b)             — (a + b - 1) / b (constexpr)
//   unsigned fk::cvta_to_shared(const void* p) — 32-bit shared-window address of a shared-memory pointer
//   int fk::swizzle_xor(int row, int chunk)    — chunk ^ (row & 7): 16-byte chunk of a row under the 128-byte XOR swizzle
//   float fk::neg_inf()                        — -inf (no math.h under NVRTC)
//   fk::named_barrier_sync(id, n) / named_barrier_arrive(id, n) — bar.sync / bar.arrive on barrier id 1..15, n threads (multiple of 32)
//   fk::st_release_gpu(unsigned* p, v) / unsigned fk::ld_acquire_gpu(const unsigned* p) — GPU-scope flag store / load
#pragma once

#define FK_DEVICE __device__ __forceinline__

#if !defined(FORGEK_CUTENSORMAP_DEFINED)
#define FORGEK_CUTENSORMAP_DEFINED
#if defined(__CUDACC_RTC__)
// NVRTC cannot include cuda.h (it pulls in stdlib.h); a kernel only needs CUtensorMap's size and
// alignment to receive one by value: 128 opaque bytes aligned to 64.
typedef struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; } CUtensorMap;
#else
#include <cuda.h>
#endif
#endif

namespace fk {

// (a + b - 1) / b for a >= 0, b > 0.
__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The 32-bit shared-window address of `p`, which must point into shared memory (PTX operands).
FK_DEVICE unsigned cvta_to_shared(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// 16-byte chunk index of chunk `chunk` of row `row` under the 128-byte XOR swizzle (chunk ^ (row & 7)),
// the layout TMA's 128B swizzle writes; rows must hold a multiple of 8 chunks.
FK_DEVICE int swizzle_xor(int row, int chunk) { return chunk ^ (row & 7); }

// -inf as a float (math.h's INFINITY is not available under NVRTC).
FK_DEVICE float neg_inf() { return __int_as_float(0xff800000); }

// bar.sync on named barrier `id` (1..15; 0 is __syncthreads) for `count` threads (a multiple of 32);
// every warp taking part calls it.
FK_DEVICE void named_barrier_sync(int id, int count)
{
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// Counts the calling warp toward named barrier `id` without waiting (producer side of bar.sync).
FK_DEVICE void named_barrier_arrive(int id, int count)
{
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// st.release.gpu of a 32-bit flag in global memory (earlier writes of this thread are visible first).
FK_DEVICE void st_release_gpu(unsigned* p, unsigned v)
{
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
// ld.acquire.gpu of a 32-bit flag in global memory (later reads see what the releasing writer wrote).
FK_DEVICE unsigned ld_acquire_gpu(const unsigned* p)
{
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

}  // namespace fk
