/* forgek
{
  "name": "adamw_step_golden_fp64",
  "params": {"THREADS": 256},
  "launches": [
    {"kernel": "adamw_step_fp32_golden", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"],
     "args": ["p", "g", "m", "v", "lr", "beta1", "beta2", "eps", "weight_decay", "step", "N"]}
  ]
}
*/
// The truth for adamw_step_fp32: one thread per parameter, every step in fp64 from the fp32
// inputs and scalars, each result rounded once to fp32 and stored in place (p, m and v are
// inouts: the golden receives them in fp32 holding the same initial values as the candidate).
//   p  = p * (1 - lr * wd)
//   m' = beta1 * m + (1 - beta1) * g
//   v' = beta2 * v + (1 - beta2) * g^2
//   p' = p - lr * (m' / (1 - beta1^t)) / (sqrt(v' / (1 - beta2^t)) + eps)
// The update uses the unrounded m' and v'.

extern "C" __global__ void __launch_bounds__(THREADS)
adamw_step_fp32_golden(float* __restrict__ p,        // [N], in place
                       const float* __restrict__ g,  // [N]
                       float* __restrict__ m,        // [N], in place
                       float* __restrict__ v,        // [N], in place
                       float lr, float beta1, float beta2, float eps, float weight_decay, int step, int N) {
  const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (i >= N) return;
  const double b1 = beta1, b2 = beta2, lr_d = lr;
  const double bc1 = 1.0 - pow(b1, static_cast<double>(step));
  const double bc2 = 1.0 - pow(b2, static_cast<double>(step));

  const double grad = g[i];
  const double m_new = b1 * static_cast<double>(m[i]) + (1.0 - b1) * grad;
  const double v_new = b2 * static_cast<double>(v[i]) + (1.0 - b2) * grad * grad;
  const double decayed = static_cast<double>(p[i]) * (1.0 - lr_d * static_cast<double>(weight_decay));
  const double update = lr_d * (m_new / bc1) / (sqrt(v_new / bc2) + static_cast<double>(eps));

  p[i] = static_cast<float>(decayed - update);
  m[i] = static_cast<float>(m_new);
  v[i] = static_cast<float>(v_new);
}
