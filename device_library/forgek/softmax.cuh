// forgek/softmax.cuh: online softmax (namespace fk).
//   struct fk::SoftmaxState { float max; float sum; } — a set of values: their max and sum of exp(v - max)
//   SoftmaxState fk::softmax_merge(SoftmaxState a, SoftmaxState b) — the state of the union of two disjoint
//        sets (__expf; symmetric bit for bit; two empty states {-inf, 0} give {-inf, 0})
//   SoftmaxState fk::softmax_absorb(SoftmaxState s, const float (&v)[n]) — s with n more values added: one rescale of
//        the running sum per call (n + 1 __expf for n values); s may be empty {-inf, 0}; a thread calls it
//   SoftmaxState fk::warp_softmax_merge<Width = 32>(SoftmaxState s) — merged over each Width-lane group, in
//        every lane (butterfly, offsets Width/2 .. 1); the whole warp calls it
//   fk::online_softmax_mma_rows<NTiles, DTiles, Ftz = false>(float (&s)[NTiles][4], float (&o)[DTiles][4],
//        float (&m)[2], float (&l)[2], float scale_log2) — one flash-attention step on m16n8 fragments (mma.cuh layout) for the warp's
//        16 rows: s (raw scores of 8*NTiles keys) becomes P = 2^(s*scale_log2 - m_new); running max m and
//        sum l (log2 units, rows g and g+8) are updated; the output accumulators o are rescaled.
//        m starts at -inf and l at 0; at least one score per row must be finite on the first step.
//        Template flag Ftz (default false): the exponentials as fk::exp2_ftz, the scale and max folded into
//        one FFMA, instead of exp2f (which adds a subnormal range fix-up around the same MUFU op).
//   float fk::exp2_ftz(float x) — 2^x by one ex2.approx.ftz (subnormal results flush to 0; -inf gives 0)
#pragma once
#include <forgek/common.cuh>
#include <forgek/reduce.cuh>

namespace fk {

// The online-softmax state of a set of values: their max and the sum of exp(value - max).
struct SoftmaxState {
  float max;
  float sum;
};

// The state of the union of two disjoint sets; symmetric bit for bit (fmaxf and a commutative add).
FK_DEVICE SoftmaxState softmax_merge(SoftmaxState a, SoftmaxState b)
{
  const float m = fmaxf(a.max, b.max);
  if (m == neg_inf()) return {m, 0.f};  // both empty: keep exp(-inf - -inf) = NaN out
  return {m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
}

// The state of s's set with the n values v added (v finite or -inf, not all -inf when s is empty): the
// running sum is rescaled once for the batch, not once per value.
template <int n> FK_DEVICE SoftmaxState softmax_absorb(SoftmaxState s, const float (&v)[n])
{
  float batch_max = v[0];
#pragma unroll
  for (int j = 1; j < n; ++j) batch_max = fmaxf(batch_max, v[j]);
  const float m = fmaxf(s.max, batch_max);
  float sum = s.sum * __expf(s.max - m);  // exp(-inf) = 0 for the empty start state
#pragma unroll
  for (int j = 0; j < n; ++j) sum += __expf(v[j] - m);
  return {m, sum};
}

// Merges the states of each group of Width lanes; every lane ends with the group's state.
template <int Width = 32>
FK_DEVICE SoftmaxState warp_softmax_merge(SoftmaxState s)
{
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    const SoftmaxState other{__shfl_xor_sync(0xffffffffu, s.max, offset), __shfl_xor_sync(0xffffffffu, s.sum, offset)};
    s = softmax_merge(s, other);
  }
  return s;
}

// 2^x by the one MUFU instruction; results below 2^-126 flush to zero, which a softmax weight may lose.
FK_DEVICE float exp2_ftz(float x)
{
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// One online-softmax step of flash attention over mma accumulator fragments: see the header.
template <int NTiles, int DTiles, bool Ftz = false>
FK_DEVICE void online_softmax_mma_rows(float (&s)[NTiles][4], float (&o)[DTiles][4], float (&m)[2], float (&l)[2],
                                       float scale_log2)
{
  // 2^(x * scale_log2 - m): an FFMA and the bare MUFU op, or exp2f's exact-range form.
  const auto weight = [scale_log2](float x, float m_new) {
    return Ftz ? exp2_ftz(fmaf(x, scale_log2, -m_new)) : exp2f(x * scale_log2 - m_new);
  };
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {  // fragment row g (elements 0, 1) and g+8 (2, 3)
    float mx = neg_inf();
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * hr], s[nt][2 * hr + 1]));
    mx = warp_max<4>(mx) * scale_log2;  // the quad of lanes sharing the row
    const float m_new = fmaxf(m[hr], mx);
    const float alpha = Ftz ? exp2_ftz(m[hr] - m_new) : exp2f(m[hr] - m_new);  // 0 on the first step
    m[hr] = m_new;
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < NTiles; ++nt) {
      const float p0 = weight(s[nt][2 * hr], m_new), p1 = weight(s[nt][2 * hr + 1], m_new);
      s[nt][2 * hr] = p0, s[nt][2 * hr + 1] = p1;
      sum += p0 + p1;
    }
    l[hr] = l[hr] * alpha + warp_sum<4>(sum);
#pragma unroll
    for (int dt = 0; dt < DTiles; ++dt) o[dt][2 * hr] *= alpha, o[dt][2 * hr + 1] *= alpha;
  }
}

}  // namespace fk
