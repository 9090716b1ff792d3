// forgek/tma.cuh: the Hopper TMA / bulk-copy engine (namespace fk; u64 = unsigned long long). One thread issues each copy.
// `map` is the address of a `const __grid_constant__ CUtensorMap` kernel parameter; coordinates are
// in elements, innermost first (c0 = column); shared destinations/sources are 128-byte aligned
// (1024 for the 128B swizzle); loads complete their bytes on `bar` (see mbarrier.cuh: arm it with
// mbar_arrive_expect_tx for the box bytes). Out-of-bounds box elements read as zero, are not written.
//   fk::tma_load_2d(void* dst, const void* map, unsigned long long* bar, int c0, int c1) — box -> shared
//   fk::tma_load_3d(void* dst, const void* map, unsigned long long* bar, int c0, int c1, int c2)
//   fk::tma_load_4d(dst, map, bar, c0, c1, c2, c3) — e.g. an NHWC block of pixels (c, w, h, n); coordinates
//        may be negative or past the end (a convolution's padding reads as zero)
//   fk::tma_load_2d_multicast(dst, map, bar, c0, c1, unsigned short cta_mask) — into the same offset of every
//        cluster CTA in cta_mask, completing on each one's barrier at bar's offset
//   fk::tma_load_2d_hint(dst, map, bar, c0, c1, u64 policy) / tma_load_2d_multicast_hint(..., cta_mask, policy)
//   u64 fk::policy_evict_first() / policy_evict_last() — L2 cache policies for the _hint forms
//   fk::bulk_load(void* dst, const void* src, unsigned bytes, bar) — linear global -> shared copy (bytes % 16 == 0)
//   fk::bulk_load_hint(dst, src, bytes, bar, u64 policy)
//   fk::tma_store_2d(const void* map, const void* src, int c0, int c1) — shared box -> global (bulk group)
//   fk::tma_store_3d(const void* map, const void* src, int c0, int c1, int c2)
//   fk::tma_store_4d(map, src, c0, c1, c2, c3)
//   fk::bulk_store(void* dst, const void* src, unsigned bytes) — linear shared -> global copy (bulk group;
//        bytes % 16 == 0, both 16-byte aligned)
//   fk::bulk_store_hint(dst, src, bytes, u64 policy)
//   fk::bulk_commit()                  — close this thread's bulk group of stores
//   fk::bulk_wait_read<N>()            — at most N groups still reading shared memory (sources reusable)
//   fk::bulk_wait<N>()                 — at most N groups incomplete (writes done)
//   fk::fence_proxy_async_smem()       — order this thread's generic shared writes before later TMA reads
//        (each writer fences, then a barrier, then one thread stores)
//   fk::prefetch_tensormap(const void* map) — fetch the descriptor ahead of its first use
#pragma once
#include <forgek/common.cuh>

namespace fk {

// 2-D box (c0, c1) of `map` into shared `dst`, completing its bytes on `bar`.
FK_DEVICE void tma_load_2d(void* dst, const void* map, unsigned long long* bar, int c0, int c1)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(cvta_to_shared(dst)), "l"(map), "r"(c0), "r"(c1), "r"(cvta_to_shared(bar))
      : "memory");
}
// 3-D box (c0, c1, c2) of `map` into shared `dst`, completing its bytes on `bar`.
FK_DEVICE void tma_load_3d(void* dst, const void* map, unsigned long long* bar, int c0, int c1, int c2)
{
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(cvta_to_shared(dst)), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(cvta_to_shared(bar))
      : "memory");
}
// 4-D box (c0, c1, c2, c3) of `map` into shared `dst`, completing its bytes on `bar`.
FK_DEVICE void tma_load_4d(void* dst, const void* map, unsigned long long* bar, int c0, int c1, int c2, int c3)
{
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::
          "r"(cvta_to_shared(dst)), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(cvta_to_shared(bar))
      : "memory");
}
// 2-D box written to dst's offset in every cluster CTA of `cta_mask`, completing on each one's `bar`.
FK_DEVICE void tma_load_2d_multicast(void* dst, const void* map, unsigned long long* bar, int c0, int c1,
                                     unsigned short cta_mask)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(cvta_to_shared(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(cvta_to_shared(bar)), "h"(cta_mask)
      : "memory");
}
// tma_load_2d with an L2 cache policy (policy_evict_first / policy_evict_last).
FK_DEVICE void tma_load_2d_hint(void* dst, const void* map, unsigned long long* bar, int c0, int c1,
                                unsigned long long policy)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(cvta_to_shared(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(cvta_to_shared(bar)), "l"(policy)
      : "memory");
}
// tma_load_2d_multicast with an L2 cache policy.
FK_DEVICE void tma_load_2d_multicast_hint(void* dst, const void* map, unsigned long long* bar, int c0, int c1,
                                          unsigned short cta_mask, unsigned long long policy)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;\n" ::"r"(cvta_to_shared(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(cvta_to_shared(bar)), "h"(cta_mask), "l"(policy)
      : "memory");
}
// L2 policy: lines loaded under it are evicted first (data read once).
FK_DEVICE unsigned long long policy_evict_first()
{
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// L2 policy: lines loaded under it are evicted last (data reused).
FK_DEVICE unsigned long long policy_evict_last()
{
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// `bytes` (a multiple of 16; src and dst 16-byte aligned) from global src to shared dst, completing on `bar`.
FK_DEVICE void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar)
{
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   cvta_to_shared(dst)),
               "l"(src), "r"(bytes), "r"(cvta_to_shared(bar))
               : "memory");
}
// bulk_load with an L2 cache policy.
FK_DEVICE void bulk_load_hint(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                              unsigned long long policy)
{
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
          cvta_to_shared(dst)),
      "l"(src), "r"(bytes), "r"(cvta_to_shared(bar)), "l"(policy)
      : "memory");
}
// Shared box at `src` -> global box (c0, c1) of `map`, tracked in this thread's bulk group.
FK_DEVICE void tma_store_2d(const void* map, const void* src, int c0, int c1)
{
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(c0),
               "r"(c1), "r"(cvta_to_shared(src))
               : "memory");
}
// Shared box at `src` -> global box (c0, c1, c2) of `map`, tracked in this thread's bulk group.
FK_DEVICE void tma_store_3d(const void* map, const void* src, int c0, int c1, int c2)
{
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(map),
               "r"(c0), "r"(c1), "r"(c2), "r"(cvta_to_shared(src))
               : "memory");
}
// Shared box at `src` -> global box (c0, c1, c2, c3) of `map`, tracked in this thread's bulk group.
FK_DEVICE void tma_store_4d(const void* map, const void* src, int c0, int c1, int c2, int c3)
{
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(map),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(cvta_to_shared(src))
               : "memory");
}
// `bytes` (a multiple of 16; src and dst 16-byte aligned) from shared src to global dst, tracked in
// this thread's bulk group.
FK_DEVICE void bulk_store(void* dst, const void* src, unsigned bytes)
{
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(cvta_to_shared(src)),
               "r"(bytes)
               : "memory");
}
// bulk_store with an L2 cache policy.
FK_DEVICE void bulk_store_hint(void* dst, const void* src, unsigned bytes, unsigned long long policy)
{
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;\n" ::"l"(dst),
               "r"(cvta_to_shared(src)), "r"(bytes), "l"(policy)
               : "memory");
}
// Closes this thread's bulk group of TMA stores.
FK_DEVICE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared sources.
template <int Pending = 0>
FK_DEVICE void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory"); }
// Waits until at most N of this thread's bulk groups are incomplete.
template <int Pending = 0>
FK_DEVICE void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory"); }
// Orders this thread's generic-proxy shared-memory accesses with later async-proxy (TMA) ones.
FK_DEVICE void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Fetches a tensor map into the descriptor cache ahead of its first TMA.
FK_DEVICE void prefetch_tensormap(const void* map)
{
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

}  // namespace fk
