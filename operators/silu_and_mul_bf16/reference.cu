/* forgek
{
  "name": "silu_and_mul_vector8",
  "mechanisms": ["vector_16B", "streaming_store"],
  "params": {"THREADS": 256, "ITEMS": 2},
  "constraints": ["N % 8 == 0", "M*(N/8) <= 2147483647"],
  "launches": [
    {"kernel": "silu_and_mul_bf16_reference", "grid": ["ceil_div(M*(N/8), THREADS*ITEMS)"], "block": ["THREADS"],
     "args": ["x", "out", "M", "N"]}
  ]
}
*/
// Expert SwiGLU: out[m, n] = silu(x[m, n]) * x[m, N + n]. One read of x, one write of out.
//
// The output is cut into 16-byte vectors (8 bf16), numbered row by row (v = m * N/8 + c). CTA b
// owns the THREADS*ITEMS consecutive vectors from b*THREADS*ITEMS; thread t takes vectors
// t, t+THREADS, ... of that range, so each warp-wide access is 512 contiguous bytes. For each
// vector the thread loads the gate vector x[m, 8c .. 8c+8) and the up vector x[m, N+8c ..), all
// 2*ITEMS loads issued before any arithmetic (64 bytes in flight per thread), then computes in
// fp32 and stores 16 bytes. silu(a) = a / (1 + exp(-a)) uses the fast exp and divide: for
// a < -88 exp overflows to inf and the quotient is -0, the right limit.
// x is streamed with evict-first loads and out with streaming stores: neither is reused.
#include <cuda_bf16.h>
#include <forgek/vec.cuh>

extern "C" __global__ void __launch_bounds__(THREADS)
silu_and_mul_bf16_reference(const __nv_bfloat16* __restrict__ x,  // [M, 2N]: gate | up
                            __nv_bfloat16* __restrict__ out,      // [M, N]
                            int M, int N) {
  // 32-bit index math: the manifest bounds the vector count below 2^31.
  const unsigned row_vecs = N / 8;  // output vectors per row; the input row has 2*row_vecs
  const unsigned total = static_cast<unsigned>(M) * row_vecs;
  const unsigned first = blockIdx.x * (THREADS * ITEMS) + threadIdx.x;
  const uint4* x4 = reinterpret_cast<const uint4*>(x);
  uint4* out4 = reinterpret_cast<uint4*>(out);

  uint4 gate[ITEMS], up[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const unsigned v = first + i * THREADS;
    if (v < total) {
      const unsigned m = v / row_vecs, c = v - m * row_vecs;
      const size_t in = static_cast<size_t>(m) * 2 * row_vecs + c;  // vector index of x[m, 8c]
      gate[i] = __ldcs(x4 + in);
      up[i] = __ldcs(x4 + in + row_vecs);
    }
  }

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const unsigned v = first + i * THREADS;
    if (v < total) {
      float a[8], b[8];
      fk::unpack_bf16x8(gate[i], a);
      fk::unpack_bf16x8(up[i], b);
#pragma unroll
      for (int k = 0; k < 8; ++k) a[k] = __fdividef(a[k], 1.f + __expf(-a[k])) * b[k];
      __stcs(out4 + v, fk::pack_bf16x8(a));
    }
  }
}
