// forgek/split_kv.cuh: split-KV attention decoding over a paged KV cache (namespace fk): where a token's
// row lives, and the combine of partial attention states kept as (O / l, log2-sum-exp). Per thread.
//   size_t fk::paged_row(const int* pages, int token, int page_size, int heads, int head, int dim) — element
//        offset of (token, head)'s row in a cache [num_pages][page_size][heads][dim] of a sequence whose page
//        list is `pages`: token t lives in page pages[t / page_size] at slot t % page_size
//   float fk::lse2_combine<ThroughL2 = false>(const float* o, int o_stride, const float* lse, int lse_stride, int n)
//        — one column of the union of n disjoint softmax averages: state i is o[i*o_stride] (its output
//        divided by its sum l_i) and lse[i*lse_stride] = m_i + log2 l_i (scores in log2 units); returns
//        sum_i 2^(lse_i - L) o_i / sum_i 2^(lse_i - L) with L = max_i lse_i, summed in order i = 0 .. n-1.
//        n >= 1 and every lse finite. ThroughL2 reads global memory with ld.global.cg (__ldcg): for
//        states other blocks of the same launch wrote (after their fence and yours); generic loads otherwise
//   float fk::lse2_union<ThroughL2 = false>(const float* lse, int lse_stride, int n) — the union's
//        log2-sum-exp, L + log2 sum_i 2^(lse_i - L)
#pragma once
#include <forgek/common.cuh>

namespace fk {

// Element offset of the row of (token, head) in a paged cache [num_pages][page_size][heads][dim].
FK_DEVICE size_t paged_row(const int* pages, int token, int page_size, int heads, int head, int dim)
{
  return ((static_cast<size_t>(pages[token / page_size]) * page_size + token % page_size) * heads + head) * dim;
}

// A float of a partial state: through L2 when other blocks of this launch wrote it, else a plain load.
template <bool ThroughL2>
FK_DEVICE float load_state(const float* p) { return ThroughL2 ? __ldcg(p) : *p; }

// The largest of n log2-sum-exps (strided): the shift that keeps every 2^(lse_i - L) <= 1.
template <bool ThroughL2>
FK_DEVICE float lse2_max(const float* lse, int lse_stride, int n)
{
  float m = neg_inf();
  for (int i = 0; i < n; ++i) m = fmaxf(m, load_state<ThroughL2>(lse + i * lse_stride));
  return m;
}

// One column of the merged output of n disjoint partial states (O_i / l_i, lse_i): see the header.
template <bool ThroughL2 = false>
FK_DEVICE float lse2_combine(const float* o, int o_stride, const float* lse, int lse_stride, int n)
{
  const float big = lse2_max<ThroughL2>(lse, lse_stride, n);
  float num = 0.0f, den = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float f = exp2f(load_state<ThroughL2>(lse + i * lse_stride) - big);  // the share of state i's sum
    num += f * load_state<ThroughL2>(o + static_cast<size_t>(i) * o_stride);
    den += f;
  }
  return num / den;
}

// The log2-sum-exp of the union of n disjoint partial states.
template <bool ThroughL2 = false>
FK_DEVICE float lse2_union(const float* lse, int lse_stride, int n)
{
  const float big = lse2_max<ThroughL2>(lse, lse_stride, n);
  float den = 0.0f;
  for (int i = 0; i < n; ++i) den += exp2f(load_state<ThroughL2>(lse + i * lse_stride) - big);
  return big + __log2f(den);
}

}  // namespace fk
