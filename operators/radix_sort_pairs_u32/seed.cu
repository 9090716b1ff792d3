/* forgek
{
  "name": "radix_sort_pairs_warp_match",
  "mechanisms": ["smem_atomics", "warp_match_ranking", "block_scan"],
  "params": {"SORT_WARPS": 8, "SORT_ITEMS": 64, "SCAN_CTA": 1024},
  "let": {"warp_tile": "32*SORT_ITEMS", "warp_tiles": "ceil_div(N, warp_tile)", "block_tiles": "ceil_div(warp_tiles, SORT_WARPS)"},
  "workspaces": [
    {"name": "keys_a",   "bytes": "4*N", "zero": false},
    {"name": "values_a", "bytes": "4*N", "zero": false},
    {"name": "keys_b",   "bytes": "4*N", "zero": false},
    {"name": "values_b", "bytes": "4*N", "zero": false},
    {"name": "counts",   "bytes": "4*256*warp_tiles", "zero": false},
    {"name": "totals",   "bytes": "4*256", "zero": false}
  ],
  "launches": [
    {"kernel": "sort_seed_count",        "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_in", "counts", "N", "0"]},
    {"kernel": "sort_seed_scan_columns", "grid": [256],           "block": ["SCAN_CTA"], "args": ["counts", "totals", "warp_tiles"]},
    {"kernel": "sort_seed_scatter",      "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_in", "values_in", "counts", "totals", "keys_a", "values_a", "N", "0"]},
    {"kernel": "sort_seed_count",        "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_a", "counts", "N", "8"]},
    {"kernel": "sort_seed_scan_columns", "grid": [256],           "block": ["SCAN_CTA"], "args": ["counts", "totals", "warp_tiles"]},
    {"kernel": "sort_seed_scatter",      "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_a", "values_a", "counts", "totals", "keys_b", "values_b", "N", "8"]},
    {"kernel": "sort_seed_count",        "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_b", "counts", "N", "16"]},
    {"kernel": "sort_seed_scan_columns", "grid": [256],           "block": ["SCAN_CTA"], "args": ["counts", "totals", "warp_tiles"]},
    {"kernel": "sort_seed_scatter",      "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_b", "values_b", "counts", "totals", "keys_a", "values_a", "N", "16"]},
    {"kernel": "sort_seed_count",        "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_a", "counts", "N", "24"]},
    {"kernel": "sort_seed_scan_columns", "grid": [256],           "block": ["SCAN_CTA"], "args": ["counts", "totals", "warp_tiles"]},
    {"kernel": "sort_seed_scatter",      "grid": ["block_tiles"], "block": ["32*SORT_WARPS"],    "args": ["keys_a", "values_a", "counts", "totals", "keys_out", "values_out", "N", "24"]}
  ]
}
*/
// A plain starting point: LSD radix sort, 4 passes of 8 bits, pairs travelling
// in -> a -> b -> a -> out. The unit of work is a warp tile of 32*SORT_ITEMS consecutive pairs. Per pass:
//   count:        counts[d][w] = keys of warp tile w with digit d      (shared atomics, digit-major)
//   scan_columns: CTA d turns row d of counts into exclusive running offsets within the digit and
//                 writes the digit's total to totals[d]
//   scatter:      each warp walks its tile 32 pairs at a time, in order; lanes holding the same
//                 digit find each other with __match_any_sync and take consecutive slots by lane
//                 order, so the pass is stable; the digit start is the exclusive scan of totals.
// Correct for any N. Left slow on purpose: three launches and two reads of the keys per pass,
// 4-byte scattered stores (one 32-byte sector per pair when digits are random), and an 8-bit digit
// with no look-back; a onesweep design reads each pair once per pass.
#include <cub/block/block_scan.cuh>

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ unsigned digit_of(unsigned key, int shift) { return (key >> shift) & 0xffu; }

extern "C" __global__ void __launch_bounds__(32 * SORT_WARPS)
sort_seed_count(const unsigned* __restrict__ keys,  // [N]
                unsigned* __restrict__ counts,      // [256, warp_tiles]
                int N, int shift) {
  __shared__ unsigned histogram[SORT_WARPS][256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int d = lane; d < 256; d += 32) histogram[warp][d] = 0;
  __syncwarp();
  const int warp_tiles = (N + 32 * SORT_ITEMS - 1) / (32 * SORT_ITEMS);
  const int w = blockIdx.x * SORT_WARPS + warp;
  if (w >= warp_tiles) return;
  const long long base = static_cast<long long>(w) * (32 * SORT_ITEMS);
  for (int it = 0; it < SORT_ITEMS; ++it) {
    const long long i = base + it * 32 + lane;
    if (i < N) atomicAdd(&histogram[warp][digit_of(keys[i], shift)], 1u);
  }
  __syncwarp();
  for (int d = lane; d < 256; d += 32) counts[static_cast<size_t>(d) * warp_tiles + w] = histogram[warp][d];
}

extern "C" __global__ void __launch_bounds__(SCAN_CTA)
sort_seed_scan_columns(unsigned* __restrict__ counts,  // [256, warp_tiles], in place
                       unsigned* __restrict__ totals,  // [256]
                       int warp_tiles) {
  using BlockScan = cub::BlockScan<unsigned, SCAN_CTA>;
  __shared__ typename BlockScan::TempStorage temp;
  unsigned* row = counts + static_cast<size_t>(blockIdx.x) * warp_tiles;  // digit blockIdx.x
  unsigned carry = 0;  // pairs of this digit in the warp tiles already scanned
  for (int first = 0; first < warp_tiles; first += SCAN_CTA) {
    const int t = first + threadIdx.x;
    const unsigned c = t < warp_tiles ? row[t] : 0u;
    unsigned before, chunk_total;
    BlockScan(temp).ExclusiveSum(c, before, chunk_total);
    if (t < warp_tiles) row[t] = carry + before;
    carry += chunk_total;
    __syncthreads();  // temp is reused by the next chunk
  }
  if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

extern "C" __global__ void __launch_bounds__(32 * SORT_WARPS)
sort_seed_scatter(const unsigned* __restrict__ keys_src, const unsigned* __restrict__ values_src,  // [N]
                  const unsigned* __restrict__ counts,  // [256, warp_tiles] offsets within each digit
                  const unsigned* __restrict__ totals,  // [256] pairs per digit
                  unsigned* __restrict__ keys_dst, unsigned* __restrict__ values_dst,  // [N]
                  int N, int shift) {
  __shared__ unsigned digit_start[256];    // exclusive scan of totals
  __shared__ unsigned next[SORT_WARPS][256];    // per warp: where its next pair of each digit goes
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (warp == 0) {  // lane l scans digits [8l, 8l+8), then the 32 lane sums are scanned by shuffles
    unsigned mine[8], sum = 0;
    for (int k = 0; k < 8; ++k) mine[k] = totals[8 * lane + k], sum += mine[k];
    unsigned inclusive = sum;
    for (int offset = 1; offset < 32; offset *= 2) {
      const unsigned other = __shfl_up_sync(kFullMask, inclusive, offset);
      if (lane >= offset) inclusive += other;
    }
    unsigned running = inclusive - sum;
    for (int k = 0; k < 8; ++k) digit_start[8 * lane + k] = running, running += mine[k];
  }
  __syncthreads();

  const int warp_tiles = (N + 32 * SORT_ITEMS - 1) / (32 * SORT_ITEMS);
  const int w = blockIdx.x * SORT_WARPS + warp;
  if (w >= warp_tiles) return;
  for (int d = lane; d < 256; d += 32) next[warp][d] = digit_start[d] + counts[static_cast<size_t>(d) * warp_tiles + w];
  __syncwarp();

  const long long base = static_cast<long long>(w) * (32 * SORT_ITEMS);
  for (int it = 0; it < SORT_ITEMS; ++it) {
    const long long i = base + it * 32 + lane;
    const bool valid = i < N;
    const unsigned key = valid ? keys_src[i] : 0u;
    const unsigned d = valid ? digit_of(key, shift) : 256u;  // 256: a group of its own, never stored
    const unsigned peers = __match_any_sync(kFullMask, d);
    const unsigned rank = __popc(peers & ((1u << lane) - 1u));  // peers in lower lanes come first
    if (valid) {
      const unsigned at = next[warp][d] + rank;
      keys_dst[at] = key;
      values_dst[at] = values_src[i];
    }
    __syncwarp();  // every peer has read next[warp][d] before its leader advances it
    if (valid && rank == 0) next[warp][d] += __popc(peers);
    __syncwarp();
  }
}
