/* forgek
{
  "name": "radix_sort_pairs_golden",
  "params": {"TILE": 4096, "THREADS": 128},
  "let": {"tiles": "ceil_div(N, TILE)"},
  "workspaces": [
    {"name": "keys_a",   "bytes": "4*N", "zero": false},
    {"name": "values_a", "bytes": "4*N", "zero": false},
    {"name": "keys_b",   "bytes": "4*N", "zero": false},
    {"name": "values_b", "bytes": "4*N", "zero": false},
    {"name": "counts",   "bytes": "4*256*tiles", "zero": false}
  ],
  "launches": [
    {"kernel": "sort_golden_count",   "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_in", "counts", "N", "0"]},
    {"kernel": "sort_golden_offsets", "grid": [1], "block": [256], "args": ["counts", "tiles"]},
    {"kernel": "sort_golden_scatter", "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_in", "values_in", "counts", "keys_a", "values_a", "N", "0"]},
    {"kernel": "sort_golden_count",   "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_a", "counts", "N", "8"]},
    {"kernel": "sort_golden_offsets", "grid": [1], "block": [256], "args": ["counts", "tiles"]},
    {"kernel": "sort_golden_scatter", "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_a", "values_a", "counts", "keys_b", "values_b", "N", "8"]},
    {"kernel": "sort_golden_count",   "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_b", "counts", "N", "16"]},
    {"kernel": "sort_golden_offsets", "grid": [1], "block": [256], "args": ["counts", "tiles"]},
    {"kernel": "sort_golden_scatter", "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_b", "values_b", "counts", "keys_a", "values_a", "N", "16"]},
    {"kernel": "sort_golden_count",   "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_a", "counts", "N", "24"]},
    {"kernel": "sort_golden_offsets", "grid": [1], "block": [256], "args": ["counts", "tiles"]},
    {"kernel": "sort_golden_scatter", "grid": ["ceil_div(tiles, THREADS)"], "block": ["THREADS"], "args": ["keys_a", "values_a", "counts", "keys_out", "values_out", "N", "24"]}
  ]
}
*/
// The truth for radix_sort_pairs_u32: an LSD radix sort, 4 passes of 8 bits (bits 0-7 first),
// each pass a stable counting sort, so the whole sort is stable. Pairs travel
// in -> a -> b -> a -> out. Every pass is three launches over tiles of TILE consecutive pairs,
// each tile handled by ONE thread walking it in order, which is what makes each pass stable
// without any intra-warp ranking:
//   count:   counts[d][t] = number of keys of tile t whose digit is d          (digit-major)
//   offsets: counts[d][t] <- sum of counts[d'][t'] over d' < d, and d' == d with t' < t
//            (an exclusive scan of counts in digit-major order: where tile t's first d goes)
//   scatter: tile t walks its pairs in order, sending each to dst[next[d]++]
// Slow (thousands of threads each walking 4096 pairs) but short and plainly right.

__device__ __forceinline__ unsigned digit_of(unsigned key, int shift) { return (key >> shift) & 0xffu; }

extern "C" __global__ void __launch_bounds__(THREADS)
sort_golden_count(const unsigned* __restrict__ keys,  // [N]
                  unsigned* __restrict__ counts,      // [256, tiles]
                  int N, int shift) {
  const int tiles = (N + TILE - 1) / TILE;
  const int t = blockIdx.x * THREADS + threadIdx.x;
  if (t >= tiles) return;
  unsigned histogram[256];  // per-thread, in local memory
  for (int d = 0; d < 256; ++d) histogram[d] = 0;
  const long long end = min(static_cast<long long>(t + 1) * TILE, static_cast<long long>(N));
  for (long long i = static_cast<long long>(t) * TILE; i < end; ++i) ++histogram[digit_of(keys[i], shift)];
  for (int d = 0; d < 256; ++d) counts[static_cast<size_t>(d) * tiles + t] = histogram[d];
}

extern "C" __global__ void __launch_bounds__(256)
sort_golden_offsets(unsigned* __restrict__ counts,  // [256, tiles], in place
                    int tiles) {
  // Thread d owns digit d's row of counts (contiguous): its total, then a serial exclusive scan
  // of the 256 totals, then the row rewritten as running offsets.
  __shared__ unsigned digit_start[256];
  const int d = threadIdx.x;
  unsigned* row = counts + static_cast<size_t>(d) * tiles;
  unsigned total = 0;
  for (int t = 0; t < tiles; ++t) total += row[t];
  digit_start[d] = total;
  __syncthreads();
  if (d == 0) {
    unsigned running = 0;
    for (int k = 0; k < 256; ++k) {
      const unsigned c = digit_start[k];
      digit_start[k] = running;
      running += c;
    }
  }
  __syncthreads();
  unsigned running = digit_start[d];
  for (int t = 0; t < tiles; ++t) {
    const unsigned c = row[t];
    row[t] = running;
    running += c;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
sort_golden_scatter(const unsigned* __restrict__ keys_src, const unsigned* __restrict__ values_src,  // [N]
                    const unsigned* __restrict__ offsets,                                          // [256, tiles]
                    unsigned* __restrict__ keys_dst, unsigned* __restrict__ values_dst,            // [N]
                    int N, int shift) {
  const int tiles = (N + TILE - 1) / TILE;
  const int t = blockIdx.x * THREADS + threadIdx.x;
  if (t >= tiles) return;
  unsigned next[256];  // where tile t's next pair of each digit goes
  for (int d = 0; d < 256; ++d) next[d] = offsets[static_cast<size_t>(d) * tiles + t];
  const long long end = min(static_cast<long long>(t + 1) * TILE, static_cast<long long>(N));
  for (long long i = static_cast<long long>(t) * TILE; i < end; ++i) {
    const unsigned key = keys_src[i];
    const unsigned at = next[digit_of(key, shift)]++;
    keys_dst[at] = key;
    values_dst[at] = values_src[i];
  }
}
