// forgek/activation.cuh: elementwise activations in fp32 (namespace fk).
//   float fk::gelu_tanh_approx(float x)  — GELU, tanh form: 0.5x + 0.5x*tanh(u), u = sqrt(2/pi)(x + 0.044715x^3),
//        with tanh.approx (one MUFU op; relative error of tanh ~2^-11)
//   float fk::gelu_tanh_sigmoid(float x) — the same GELU as x / (1 + exp(-2u)) (0.5(1 + tanh(u)) = 1/(1 + exp(-2u)))
//        with __expf and __fdividef (two MUFU ops, a few ulps); x -> -inf gives -0, the limit
#pragma once
#include <forgek/common.cuh>

namespace fk {

// GELU (tanh approximation) through tanh.approx: u is formed as x * (k + k*0.044715*x^2) in one fma.
FK_DEVICE float gelu_tanh_approx(float x)
{
  const float k = 0.7978845608f;  // sqrt(2 / pi)
  const float u = x * fmaf(k * 0.044715f, x * x, k);
  const float half_x = 0.5f * x;
  return fmaf(half_x, __tanhf(u), half_x);
}

// GELU (tanh approximation) through the sigmoid identity: for x -> -inf exp(-2u) overflows to inf and
// the quotient is -0, the right limit; for x -> +inf it tends to x.
FK_DEVICE float gelu_tanh_sigmoid(float x)
{
  const float k = 0.7978845608f;  // sqrt(2 / pi)
  const float minus_two_u = x * fmaf(-2.f * k * 0.044715f, x * x, -2.f * k);
  return __fdividef(x, 1.f + __expf(minus_two_u));
}

}  // namespace fk
