/* forgek
{
  "name": "radix_select_fk",
  "constraints": ["N <= 4096", "K <= 64", "K <= N"],
  "launches": [
    {"kernel": "select_rows", "grid": ["R"], "block": [256], "args": ["x", "values", "indices", "checks", "R", "N", "K"]}
  ]
}
*/
// One CTA of 256 threads per row. The row's entries go to shared memory in reverse column order
// (entry e holds column N-1-e), so that nothing can lean on the entries' order; the first K are
// selected, then rank-sorted by (key desc, column asc) into the row of values and indices.
// Thread t's key for the bound is the largest of columns t, t+256, ... (0: none), against the K-th
// largest of the 256 keys found by counting.
#include <forgek/radix_select.cuh>

constexpr int kThreads = 256;
constexpr int kMaxN = 4096;
constexpr int kMaxK = 64;

extern "C" __global__ void __launch_bounds__(kThreads)
select_rows(const float* __restrict__ x, float* __restrict__ values, int* __restrict__ indices,
            int* __restrict__ checks, int R, int N, int K)
{
  __shared__ unsigned bits[kMaxN];  // [N] entry e: column N-1-e
  __shared__ int col[kMaxN];
  __shared__ unsigned keys[kThreads];  // [256] each thread's key for the bound
  __shared__ fk::RadixSelectState<kMaxK> s;
  __shared__ unsigned kth;
  const int r = blockIdx.x, tid = threadIdx.x;
  if (r >= R) return;
  const float* row = x + static_cast<size_t>(r) * N;
  unsigned mine = 0u;
  for (int c = tid; c < N; c += kThreads) {
    bits[N - 1 - c] = __float_as_uint(row[c]);
    col[N - 1 - c] = c;
    mine = max(mine, fk::float_order_key(__float_as_uint(row[c])));
  }
  keys[tid] = mine;
  __syncthreads();

  fk::radix_select_first_k<kThreads>(bits, col, N, K, s);
  if (tid < K) {
    const unsigned key = fk::float_order_key(s.sel_bits[tid]);
    const int c = s.sel_col[tid];
    int rank = 0;
    for (int j = 0; j < K; ++j) {
      const unsigned kj = fk::float_order_key(s.sel_bits[j]);
      rank += kj > key || (kj == key && s.sel_col[j] < c);
    }
    values[static_cast<size_t>(r) * K + rank] = __uint_as_float(s.sel_bits[tid]);
    indices[static_cast<size_t>(r) * K + rank] = c;
    if (rank == K - 1) checks[2 * r] = s.sel_count == K && s.min_key == key;
  }
  __syncthreads();  // s is reused below

  // The K-th largest of the 256 keys: the key with fewer than K above it and at least K at or above.
  int above = 0, at_or_above = 0;
  for (int j = 0; j < kThreads; ++j) above += keys[j] > mine, at_or_above += keys[j] >= mine;
  if (above < K && at_or_above >= K) kth = mine;  // every such thread writes the same key
  const unsigned t = fk::radix_bound_of_keys<kThreads>(mine, K, s);
  __syncthreads();
  if (tid == 0) checks[2 * r + 1] = t <= kth && t >= (kth & 0xff000000u);
}
