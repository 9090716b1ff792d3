// forgek/lookback.cuh: decoupled look-back (Merrill & Garland), the chaining of a one-pass scan's
// tiles. Each tile owns one 64-bit status word in a zeroed workspace (flag in the high half, the
// fp32 value's bits in the low half, written whole, so flag and value are always seen together);
// a tile publishes its AGGREGATE (its own sum) at once, reads back over its predecessors' words to
// the nearest PREFIX, then publishes its own PREFIX (the sum of every tile up to and including it).
// Deadlock-free only when tile ids follow the order in which tiles start (take them from an atomic
// counter, not from blockIdx), so that every tile waited on belongs to a running CTA.
//   fk::lookback_nothing / lookback_aggregate / lookback_prefix — the flags (a zeroed word: nothing yet)
//   fk::lookback_publish(unsigned long long* word, unsigned flag, float value) — one thread: release store of (flag, value)
//   unsigned long long fk::lookback_observe(unsigned long long* word) — the word as it is now (gpu-scope relaxed load)
//   unsigned fk::lookback_flag(unsigned long long word) / float fk::lookback_value(word) — its halves
//   float fk::lookback_exclusive<backoff_ns>(status, tile, lane) — whole warp: sum over tiles 0..tile-1 (tile > 0)
//   float fk::lookback_chain<backoff_ns>(status, tile, aggregate, lane) — whole warp: publish tile's
//       AGGREGATE, look back, publish its PREFIX; returns the exclusive sum (0 for tile 0) in every lane
#pragma once

#include <cuda/atomic>
#include <forgek/common.cuh>
#include <forgek/reduce.cuh>

namespace fk {

// Status flags (high half of a status word); a workspace that starts zeroed reads as "nothing yet".
constexpr unsigned lookback_nothing = 0;
constexpr unsigned lookback_aggregate = 1;
constexpr unsigned lookback_prefix = 2;

using lookback_word_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

// One thread publishes (flag, value) for a tile in a single 64-bit release store: what the tile
// wrote before it (its outputs, for a consumer that reads them) is visible to whoever sees the flag.
FK_DEVICE void lookback_publish(unsigned long long* word, unsigned flag, float value)
{
  const unsigned long long packed = (static_cast<unsigned long long>(flag) << 32) | __float_as_uint(value);
  lookback_word_ref(*word).store(packed, cuda::memory_order_release);
}

// A tile's status word as it is now (gpu-scope load: never served from L1 or kept in a register).
FK_DEVICE unsigned long long lookback_observe(unsigned long long* word)
{
  return lookback_word_ref(*word).load(cuda::memory_order_relaxed);
}

FK_DEVICE unsigned lookback_flag(unsigned long long word) { return static_cast<unsigned>(word >> 32); }
FK_DEVICE float lookback_value(unsigned long long word) { return __uint_as_float(static_cast<unsigned>(word)); }

// The whole warp: the sum over tiles 0 .. tile-1 (tile > 0), in every lane. Lane l of the window
// based at `newest` waits until tile newest-l has published anything; the values of the lanes up
// to the nearest PREFIX (the lowest such lane) are summed, or all 32 aggregates and the window
// moves 32 tiles back. A position before tile 0 reads as a PREFIX of 0, so the look-back ends.
// backoff_ns > 0: a window that is not complete yet is polled again after __nanosleep(backoff_ns),
// fewer polls of the few L2 lines every waiting tile reads; 0 polls back to back.
template <int backoff_ns>
__device__ float lookback_exclusive(unsigned long long* status, int tile, int lane)
{
  float exclusive = 0.f;
  for (int newest = tile - 1;; newest -= 32) {
    const int pred = newest - lane;
    unsigned long long word;
    for (;;) {
      word = pred >= 0 ? lookback_observe(status + pred) : static_cast<unsigned long long>(lookback_prefix) << 32;
      if (!__any_sync(0xffffffffu, lookback_flag(word) == lookback_nothing)) break;
      if (backoff_ns > 0) __nanosleep(backoff_ns);
    }
    const unsigned prefixes = __ballot_sync(0xffffffffu, lookback_flag(word) == lookback_prefix);
    const int last = prefixes ? __ffs(prefixes) - 1 : 31;
    exclusive += warp_sum(lane <= last ? lookback_value(word) : 0.f);
    if (prefixes) return exclusive;
  }
}

// The whole warp of a tile whose sum is `aggregate` (the same in every lane): publishes the
// AGGREGATE so that successors may pass over this tile, looks back, publishes the PREFIX; tile 0
// publishes its PREFIX at once. Returns the sum over the tiles before it, in every lane.
template <int backoff_ns>
__device__ float lookback_chain(unsigned long long* status, int tile, float aggregate, int lane)
{
  if (tile == 0) {
    if (lane == 0) lookback_publish(status, lookback_prefix, aggregate);
    return 0.f;
  }
  if (lane == 0) lookback_publish(status + tile, lookback_aggregate, aggregate);
  const float exclusive = lookback_exclusive<backoff_ns>(status, tile, lane);
  if (lane == 0) lookback_publish(status + tile, lookback_prefix, exclusive + aggregate);
  return exclusive;
}

}  // namespace fk
