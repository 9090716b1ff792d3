// forgek/mbarrier.cuh: shared-memory mbarriers (namespace fk); `bar` is an 8-byte-aligned
// unsigned long long in shared memory. A phase completes when its pending arrivals reach 0 and its
// expected transaction bytes (expect_tx, completed by TMA / bulk copies) have all landed.
//   fk::mbar_init(unsigned long long* bar, unsigned count)  — one thread: `count` arrivals per phase
//   fk::fence_barrier_init()           — after init, before other threads / TMA / peer CTAs use the barriers
//                                        (fence.mbarrier_init.release.cluster; then __syncthreads or cluster_sync)
//   fk::mbar_arrive(bar)               — one arrival
//   fk::mbar_arrive_expect_tx(bar, unsigned bytes) — one arrival that also adds `bytes` to the phase's expected bytes
//   fk::mbar_expect_tx(bar, unsigned bytes)        — adds expected bytes without arriving
//   bool fk::mbar_try_wait(bar, unsigned parity)   — has the phase with this parity completed? (may block briefly)
//   fk::mbar_wait(bar, unsigned parity)            — spin until the phase with this parity completes (a fresh
//                                        barrier counts as having completed parity 1: waiting on 1 returns at once)
//   fk::mbar_arrive_cluster(bar, unsigned cta)     — arrive on the barrier at bar's offset in cluster CTA `cta`
//                                        (release.cta semantics: orders only this thread's prior work)
//   fk::mbar_arrive_cluster_release(bar, unsigned cta) — the same with .release.cluster semantics
#pragma once
#include <forgek/common.cuh>

namespace fk {

// One thread initialises `bar` for `count` arrivals per phase.
FK_DEVICE void mbar_init(unsigned long long* bar, unsigned count)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(cvta_to_shared(bar)), "r"(count) : "memory");
}
// Makes the initialising thread's mbarrier inits visible to the async proxy and the cluster.
FK_DEVICE void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival on `bar`.
FK_DEVICE void mbar_arrive(unsigned long long* bar)
{
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(cvta_to_shared(bar)) : "memory");
}
// One arrival that also announces `bytes` more bytes the current phase must receive.
FK_DEVICE void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes)
{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(cvta_to_shared(bar)), "r"(bytes)
               : "memory");
}
// Announces `bytes` more bytes for the current phase without arriving.
FK_DEVICE void mbar_expect_tx(unsigned long long* bar, unsigned bytes)
{
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(cvta_to_shared(bar)), "r"(bytes)
               : "memory");
}
// True once the phase with parity `parity` has completed (one bounded try; loop for a wait).
FK_DEVICE bool mbar_try_wait(unsigned long long* bar, unsigned parity)
{
  unsigned done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(cvta_to_shared(bar)), "r"(parity)
      : "memory");
  return done != 0;
}
// Spins until the phase with parity `parity` has completed.
FK_DEVICE void mbar_wait(unsigned long long* bar, unsigned parity)
{
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(cvta_to_shared(bar)),
      "r"(parity)
      : "memory");
}
// Arrives on the barrier at `bar`'s shared-memory offset in CTA `cta` of the cluster (release.cta).
FK_DEVICE void mbar_arrive_cluster(unsigned long long* bar, unsigned cta)
{
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(cvta_to_shared(bar)),
      "r"(cta)
      : "memory");
}
// Arrives on the barrier at `bar`'s offset in CTA `cta` of the cluster, with release.cluster semantics.
FK_DEVICE void mbar_arrive_cluster_release(unsigned long long* bar, unsigned cta)
{
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(cvta_to_shared(bar)),
      "r"(cta)
      : "memory");
}

}  // namespace fk
