/* forgek
{
  "name": "topk_rows_k_passes",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction"],
  "params": {"THREADS": 1024},
  "constraints": ["N % 4 == 0"],
  "launches": [
    {"kernel": "topk_rows_seed", "grid": ["M"], "block": ["THREADS"], "args": ["x", "values", "indices", "M", "N", "K"]}
  ]
}
*/
// A plain starting point: one CTA per row and K passes over the row. Pass r finds the largest
// element that comes after pick r-1 in the (value descending, column ascending) order, with
// 16-byte loads, a warp-shuffle argmax and one shared slot per warp.
// Correct for any M, K <= N and N a multiple of 4. Left slow on purpose: K = 50 passes read the
// row 50 times (mostly from L2). A radix select of the K-th value (a few histogram passes) followed
// by one gathering pass, or per-warp top-K queues, read it a handful of times.
#include <forgek/reduce.cuh>


extern "C" __global__ void __launch_bounds__(THREADS)
topk_rows_seed(const float* __restrict__ x,  // [M, N] row-major
               float* __restrict__ values,   // [M, K]
               int* __restrict__ indices,    // [M, K]
               int M, int N, int K) {
  __shared__ float warp_value[THREADS / 32];
  __shared__ int warp_column[THREADS / 32];
  const int row = blockIdx.x;
  if (row >= M) return;
  const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * N);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  float last_v = __int_as_float(0x7f800000);  // +inf at column -1: before everything
  int last_j = -1;
  for (int r = 0; r < K; ++r) {
    float v = __int_as_float(0xff800000);  // -inf at column N: after everything
    int j = N;
    for (int q = threadIdx.x; q < N / 4; q += THREADS) {
      const float4 f = xrow[q];
      const float e[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (fk::argmax_before(last_v, last_j, e[k], 4 * q + k) && fk::argmax_before(e[k], 4 * q + k, v, j))
          v = e[k], j = 4 * q + k;
    }
    fk::warp_argmax(v, j);
    if (lane == 0) warp_value[warp] = v, warp_column[warp] = j;
    __syncthreads();
    v = warp_value[0], j = warp_column[0];
    for (int w = 1; w < THREADS / 32; ++w)
      if (fk::argmax_before(warp_value[w], warp_column[w], v, j)) v = warp_value[w], j = warp_column[w];
    __syncthreads();  // warp_* is rewritten by the next pass
    last_v = v, last_j = j;
    if (threadIdx.x == 0) {
      values[static_cast<size_t>(row) * K + r] = v;
      indices[static_cast<size_t>(row) * K + r] = j;
    }
  }
}
