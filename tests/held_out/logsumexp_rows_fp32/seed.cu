/* forgek
{
  "name": "logsumexp_rows_online",
  "mechanisms": ["vector_16B", "online_softmax", "warp_shuffle_reduction"],
  "params": {"BLOCK": [64, 128, 256, 512, 1024]},
  "constraints": ["N % 4 == 0"],
  "launches": [
    {"kernel": "logsumexp_rows_seed", "grid": ["M"], "block": ["BLOCK"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// One CTA of BLOCK threads per row and one pass over it: each thread keeps a running (max, sum of
// exp(x - max)) over 16-byte loads, and the pairs are merged with warp shuffles and one shared
// step. The block size is the search space: short rows want small CTAs, long rows large ones.

#define kNegInf __int_as_float(0xff800000)  // -inf

__device__ void merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == kNegInf) return;  // both empty
  s = s * __expf(m - mn) + s2 * __expf(m2 - mn);
  m = mn;
}

__device__ void add(float& m, float& s, float v) {
  if (v > m) {
    s = s * __expf(m - v) + 1.f;
    m = v;
  } else {
    s += __expf(v - m);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
logsumexp_rows_seed(const float* __restrict__ x,  // [M, N] row-major, N % 4 == 0
                    float* __restrict__ y,        // [M]
                    int M, int N) {
  __shared__ float part_m[BLOCK / 32], part_s[BLOCK / 32];  // [BLOCK/32] one pair per warp
  const int row = blockIdx.x;
  if (row >= M) return;
  const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * N);
  float m = kNegInf, s = 0.f;
  for (int j = threadIdx.x; j < N / 4; j += BLOCK) {
    const float4 v = __ldg(xrow + j);
    add(m, s, v.x);
    add(m, s, v.y);
    add(m, s, v.z);
    add(m, s, v.w);
  }
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    part_m[warp] = m;
    part_s[warp] = s;
  }
  __syncthreads();
  if (warp != 0) return;
  m = lane < BLOCK / 32 ? part_m[lane] : kNegInf;
  s = lane < BLOCK / 32 ? part_s[lane] : 0.f;
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  if (lane == 0) y[row] = m + logf(s);
}
