// forgek/cluster.cuh: thread-block clusters and distributed shared memory (namespace fk, sm_90).
//   unsigned fk::cluster_ctarank() / cluster_nctarank() — this CTA's rank in its cluster / CTAs per cluster
//   fk::cluster_arrive()              — barrier.cluster.arrive.release (every thread of every CTA, .aligned:
//                                       call it warp-converged)
//   fk::cluster_arrive_relaxed()      — the same without release semantics (no memory ordering)
//   fk::cluster_wait()                — barrier.cluster.wait.acquire: wait for every thread's arrival
//   fk::cluster_sync()                — arrive + wait; shared writes before it are visible cluster-wide after
//   unsigned fk::map_shared_rank(const void* p, unsigned cta) — shared::cluster address of p's offset in CTA `cta`
//   float fk::ld_shared_cluster_f32(unsigned addr) / float4 ld_shared_cluster_f4(addr) / unsigned ld_shared_cluster_u32(addr)
//   fk::st_shared_cluster_f32(unsigned addr, float v) / st_shared_cluster_u32(addr, unsigned v)
//   float4 fk::ld_dsmem_f4(const void* p, unsigned cta) — 16 B (16-byte aligned) at p's offset in CTA `cta`
// A CTA must not exit while peers may still access its shared memory: end with cluster_sync().
#pragma once
#include <forgek/common.cuh>

namespace fk {

// This CTA's rank in its cluster (0 .. cluster_nctarank() - 1).
FK_DEVICE unsigned cluster_ctarank()
{
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// The number of CTAs in this cluster.
FK_DEVICE unsigned cluster_nctarank()
{
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}
// Arrives on the cluster barrier with release semantics (all threads of every CTA, warp-converged).
FK_DEVICE void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
// Arrives on the cluster barrier without memory ordering.
FK_DEVICE void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory"); }
// Waits until every thread of the cluster has arrived, with acquire semantics.
FK_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }
// Every thread of every CTA of the cluster arrives, then waits for all the others.
FK_DEVICE void cluster_sync()
{
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The shared::cluster address of the same offset as shared pointer p in CTA `cta` of the cluster.
FK_DEVICE unsigned map_shared_rank(const void* p, unsigned cta)
{
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(cvta_to_shared(p)), "r"(cta));
  return remote;
}
// A float at a shared::cluster address (from map_shared_rank).
FK_DEVICE float ld_shared_cluster_f32(unsigned addr)
{
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
// A 32-bit word at a shared::cluster address.
FK_DEVICE unsigned ld_shared_cluster_u32(unsigned addr)
{
  unsigned v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
// 16 bytes (16-byte aligned) at a shared::cluster address.
FK_DEVICE float4 ld_shared_cluster_f4(unsigned addr)
{
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
// Stores a float at a shared::cluster address.
FK_DEVICE void st_shared_cluster_f32(unsigned addr, float v)
{
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}
// Stores a 32-bit word at a shared::cluster address.
FK_DEVICE void st_shared_cluster_u32(unsigned addr, unsigned v)
{
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
// 16 B from the same shared-memory offset as p in CTA `cta` of the cluster (one mapa + one load).
FK_DEVICE float4 ld_dsmem_f4(const void* p, unsigned cta)
{
  float4 v;
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(cvta_to_shared(p)), "r"(cta)
      : "memory");
  return v;
}

}  // namespace fk
