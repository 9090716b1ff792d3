/* forgek
{
  "name": "adamw_step_thread_per_param",
  "mechanisms": [],
  "params": {"THREADS": [64, 128, 256, 512, 1024]},
  "launches": [
    {"kernel": "adamw_step_fp32_seed", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"],
     "args": ["p", "g", "m", "v", "lr", "beta1", "beta2", "eps", "weight_decay", "step", "N"]}
  ]
}
*/
// A plain starting point: one thread per parameter, scalar 4-byte accesses, the bias
// corrections recomputed (two powf) by every thread, IEEE division and sqrt. Correct for any N;
// left slow on purpose.

extern "C" __global__ void __launch_bounds__(THREADS)
adamw_step_fp32_seed(float* __restrict__ p,        // [N], in place
                     const float* __restrict__ g,  // [N]
                     float* __restrict__ m,        // [N], in place
                     float* __restrict__ v,        // [N], in place
                     float lr, float beta1, float beta2, float eps, float weight_decay, int step, int N) {
  const int i = blockIdx.x * THREADS + threadIdx.x;
  if (i >= N) return;
  const float bc1 = 1.f - powf(beta1, static_cast<float>(step));
  const float bc2 = 1.f - powf(beta2, static_cast<float>(step));

  const float grad = g[i];
  const float m_new = beta1 * m[i] + (1.f - beta1) * grad;
  const float v_new = beta2 * v[i] + (1.f - beta2) * grad * grad;
  const float decayed = p[i] * (1.f - lr * weight_decay);
  p[i] = decayed - lr * (m_new / bc1) / (sqrtf(v_new / bc2) + eps);
  m[i] = m_new;
  v[i] = v_new;
}
