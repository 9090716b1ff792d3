// forgek/radix_select.cuh: exact block-wide selection by 8-bit radix passes over a 256-bin shared
// histogram: the first K of a set of fp32 entries (raw bits, column) in (value desc, column asc)
// order, and a bound under the K-th largest of one key per thread. Every step is exact, so inputs
// full of ties are only slower (a tied K-th key is settled by digits of the column).
//   unsigned fk::float_order_key(unsigned bits) — order-preserving key of fp32 bits (no NaN); -0.0 gets +0.0's
//   fk::RadixSelectState<MAX_K> — the shared state: histogram, the last pass's answer, the K selected
//   fk::radix_find_bin(s, need, from_top) — warp 0: the bin of the need-th entry, walked from 255 down or 0 up
//   fk::radix_pass<Threads>(s, n, need, from_top, digit_of) — all threads: histogram of digit_of(e) over
//       e < n (a digit > 255 skips e), then radix_find_bin; ends with a barrier
//   fk::radix_select_first_k<Threads>(bits, col, n, K, s) — all threads: the first K entries (K <= n,
//       K <= MAX_K, columns distinct and < 2^24) to s.sel_bits / s.sel_col (unordered), their count
//       to s.sel_count and the smallest selected key to s.min_key
//   unsigned fk::radix_bound_of_keys<Threads>(key, K, s) — all threads, one key each (0 for a thread
//       without one), K <= Threads: t <= the K-th largest key, exact to its top 16 bits at least, so
//       that at least K threads hold key >= t
#pragma once

#include <forgek/common.cuh>

namespace fk {

__device__ __forceinline__ unsigned float_order_key(unsigned bits) {
  const unsigned key = bits ^ ((bits & 0x80000000u) ? 0xffffffffu : 0x80000000u);
  return key == 0x7fffffffu ? 0x80000000u : key;  // -0.0 compares equal to +0.0
}

template <int MAX_K>
struct RadixSelectState {
  unsigned hist[256];              // [256] counts of the current digit
  unsigned digit, before, in_bin;  // radix_find_bin's answer: the bin, entries in bins ahead of it, in it
  unsigned key_and, key_or;        // AND / OR of the keys: the leading digits every entry shares
  unsigned sel_bits[MAX_K];        // [K] the selected entries, unordered
  int sel_col[MAX_K];
  int sel_count;
  unsigned min_key;  // the smallest selected key (the K-th)
};

// Lane l reads bins 8l .. 8l+7 of the walk; a shuffle scan gives each lane the entries before them.
template <class State>
__device__ __forceinline__ void radix_find_bin(State& s, unsigned need, bool from_top) {
  const int lane = threadIdx.x % 32;
  unsigned c[8], mine = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    c[i] = s.hist[from_top ? 255 - (8 * lane + i) : 8 * lane + i];
    mine += c[i];
  }
  unsigned incl = mine;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const unsigned y = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += y;
  }
  unsigned run = incl - mine;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (run < need && need <= run + c[i]) {
      s.digit = from_top ? 255 - (8 * lane + i) : 8 * lane + i;
      s.before = run;
      s.in_bin = c[i];
    }
    run += c[i];
  }
}

// Needs no barrier before it: the previous pass's readers of s.hist (warp 0) passed its last barrier.
template <int Threads, class State, class DigitOf>
__device__ __forceinline__ void radix_pass(State& s, int n, unsigned need, bool from_top, DigitOf digit_of) {
  for (int b = threadIdx.x; b < 256; b += Threads) s.hist[b] = 0;
  __syncthreads();
  for (int e = threadIdx.x; e < n; e += Threads) {
    const unsigned d = digit_of(e);
    if (d < 256u) atomicAdd(&s.hist[d], 1u);
  }
  __syncthreads();
  if (threadIdx.x < 32) radix_find_bin(s, need, from_top);
  __syncthreads();
}

// Key digits, most significant first, from the first one the entries do not all share, over the
// entries still matching the prefix; stops once the bin holding the K-th entry is taken whole.
template <int Threads, class State>
__device__ void radix_select_first_k(const unsigned* bits, const int* col, int n, int K, State& s) {
  const int tid = threadIdx.x;
  if (tid == 0) s.key_and = 0xffffffffu, s.key_or = 0u;
  __syncthreads();
  unsigned a = 0xffffffffu, o = 0u;
  for (int e = tid; e < n; e += Threads) {
    const unsigned k = float_order_key(bits[e]);
    a &= k, o |= k;
  }
  a = __reduce_and_sync(0xffffffffu, a);
  o = __reduce_or_sync(0xffffffffu, o);
  if (tid % 32 == 0) atomicAnd(&s.key_and, a), atomicOr(&s.key_or, o);
  __syncthreads();
  // The leading key bytes that every entry shares need no pass (candidates of one row often share
  // their first byte: a pass over them would be same-address atomics).
  const unsigned same = ~(s.key_and ^ s.key_or);
  int shift = 24;
  unsigned mask = 0u;
  while (shift >= 0 && ((same >> shift) & 255u) == 255u) mask |= 255u << shift, shift -= 8;
  unsigned prefix = s.key_and & mask;
  unsigned need = static_cast<unsigned>(K);
  bool whole = n == K;  // the entries matching prefix under mask are exactly the ones to take
  for (; shift >= 0 && !whole; shift -= 8) {
    radix_pass<Threads>(s, n, need, true, [&](int e) {
      const unsigned k = float_order_key(bits[e]);
      return (k & mask) == prefix ? (k >> shift) & 255u : 256u;
    });
    prefix |= s.digit << shift;
    mask |= 255u << shift;
    need -= s.before;
    whole = s.in_bin == need;
  }
  // The K-th key is tied (mask is full, prefix is that key) and only `need` of its entries fit:
  // the lowest columns among them, by column digits (columns < 2^24).
  unsigned cprefix = 0u, cmask = 0u;
  for (int cs = 16; cs >= 0 && !whole; cs -= 8) {
    radix_pass<Threads>(s, n, need, false, [&](int e) {
      const unsigned c = static_cast<unsigned>(col[e]);
      return float_order_key(bits[e]) == prefix && (c & cmask) == cprefix ? (c >> cs) & 255u : 256u;
    });
    cprefix |= s.digit << cs;
    cmask |= 255u << cs;
    need -= s.before;
    whole = s.in_bin == need;
  }
  if (tid == 0) s.sel_count = 0, s.min_key = 0xffffffffu;
  __syncthreads();
  for (int e = tid; e < n; e += Threads) {
    const unsigned key = float_order_key(bits[e]);
    const unsigned k = key & mask;
    const unsigned c = static_cast<unsigned>(col[e]);
    if (k > prefix || (k == prefix && (c & cmask) <= cprefix)) {
      const int p = atomicAdd(&s.sel_count, 1);
      s.sel_bits[p] = bits[e];
      s.sel_col[p] = static_cast<int>(c);
      atomicMin(&s.min_key, key);
    }
  }
  __syncthreads();
}

// Two passes at most (the top 16 bits): every key matching the prefix under its mask, or above it,
// is >= the prefix, and at least K keys do.
template <int Threads, class State>
__device__ __forceinline__ unsigned radix_bound_of_keys(unsigned key, int K, State& s) {
  unsigned prefix = 0u, mask = 0u, need = static_cast<unsigned>(K);
  for (int shift = 24; shift >= 16; shift -= 8) {
    radix_pass<Threads>(s, Threads, need, true,
                        [&](int) { return (key & mask) == prefix ? (key >> shift) & 255u : 256u; });
    prefix |= s.digit << shift;
    mask |= 255u << shift;
    need -= s.before;
    if (s.in_bin == need) break;  // the K largest are exactly those matching the prefix or above
  }
  return prefix;
}

}  // namespace fk
