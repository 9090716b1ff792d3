/* forgek
{
  "name": "radix_sort_pairs_reduce_then_scan",
  "mechanisms": ["warp_match_ranking", "block_scan", "smem_atomics", "vector_16B"],
  "controls": {"radix_bits": ["RADIX_BITS"], "items_per_thread": ["ITEMS"], "block_size": ["THREADS"],
               "scan_block": ["SCAN_THREADS"]},
  "params": {"RADIX_BITS": [8, 7, 6], "ITEMS": [16, 12, 20], "THREADS": [384, 256, 512], "SCAN_THREADS": [512, 1024]},
  "let": {
    "passes": "ceil_div(32, RADIX_BITS)",
    "radix": "pow2(RADIX_BITS)",
    "tile": "THREADS*ITEMS",
    "tiles": "ceil_div(N, tile)",
    "down_smem": "4*(2*tile + (THREADS/32 + 1)*radix)"
  },
  "constraints": ["THREADS >= radix", "passes >= 4 && passes <= 6", "down_smem <= 200704"],
  "workspaces": [
    {"name": "keys_a",   "bytes": "4*N", "zero": false},
    {"name": "values_a", "bytes": "4*N", "zero": false},
    {"name": "keys_b",   "bytes": "4*N", "zero": false},
    {"name": "values_b", "bytes": "4*N", "zero": false},
    {"name": "counts",   "bytes": "4*radix*tiles", "zero": false},
    {"name": "totals",   "bytes": "4*radix", "zero": false}
  ],
  "launches": [
    {"kernel": "rts_upsweep", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_in", "counts", "N", "0"]},
    {"kernel": "rts_scan", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_in", "values_in", "counts", "totals", "keys_a", "values_a", "N", "0"]},

    {"kernel": "rts_upsweep", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_a", "counts", "N", "1"]},
    {"kernel": "rts_scan", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_a", "values_a", "counts", "totals", "keys_b", "values_b", "N", "1"]},

    {"kernel": "rts_upsweep", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_b", "counts", "N", "2"]},
    {"kernel": "rts_scan", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_b", "values_b", "counts", "totals", "keys_a", "values_a", "N", "2"]},

    {"kernel": "rts_upsweep", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_a", "counts", "N", "3"]},
    {"kernel": "rts_scan", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "when": "passes == 4", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_a", "values_a", "counts", "totals", "keys_out", "values_out", "N", "3"]},
    {"kernel": "rts_downsweep", "when": "passes > 4", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_a", "values_a", "counts", "totals", "keys_b", "values_b", "N", "3"]},

    {"kernel": "rts_upsweep", "when": "passes > 4", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_b", "counts", "N", "4"]},
    {"kernel": "rts_scan", "when": "passes > 4", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "when": "passes == 5", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_b", "values_b", "counts", "totals", "keys_out", "values_out", "N", "4"]},
    {"kernel": "rts_downsweep", "when": "passes > 5", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_b", "values_b", "counts", "totals", "keys_a", "values_a", "N", "4"]},

    {"kernel": "rts_upsweep", "when": "passes > 5", "grid": ["tiles"], "block": ["THREADS"], "args": ["keys_a", "counts", "N", "5"]},
    {"kernel": "rts_scan", "when": "passes > 5", "grid": ["radix"], "block": ["SCAN_THREADS"], "args": ["counts", "totals", "tiles"]},
    {"kernel": "rts_downsweep", "when": "passes == 6", "grid": ["tiles"], "block": ["THREADS"], "smem": "down_smem",
     "args": ["keys_a", "values_a", "counts", "totals", "keys_out", "values_out", "N", "5"]}
  ]
}
*/
// Classic reduce-then-scan LSD radix sort of (key, value) pairs (CUB's pre-onesweep design): three
// launches per digit, no communication between CTAs inside a launch, so nothing waits on another
// tile; the price is a second read of the keys per pass and two extra launches. A controlled
// comparison for the onesweep family (same ranking, same tiles, same shared-memory scatter).
// passes = ceil(32 / RADIX_BITS) (4, 5 or 6); pairs travel in -> a -> b -> a -> ...; the last pass
// (chosen by `when`) writes keys_out / values_out. Per pass, tiles of TILE = THREADS * ITEMS pairs:
//
//   rts_upsweep:   CTA j -> tile j: counts[d][j] = keys of tile j with digit d (digit-major), from
//                  16-byte key loads and shared-memory atomics into one radix-counter histogram.
//   rts_scan:      CTA d -> row d of counts, SCAN_THREADS tiles at a time through a block scan:
//                  counts[d][j] <- keys of digit d in tiles before j; totals[d] <- keys of digit d.
//   rts_downsweep: CTA j -> tile j again:
//     warp w      -> pairs [w*32*ITEMS, (w+1)*32*ITEMS) of the tile, lane l -> items l, l+32, ...
//     ranking     -> per item in input order, __match_any_sync groups equal digits; the group's
//                    highest lane reads and advances the warp's counter of that digit (stable rank)
//     digit phase -> thread d: scan of the warp counters down column d; block scans give the tile-local
//                    start of each digit and the digit's global start (exclusive scan of totals)
//     scatter     -> pairs to shared memory in local sorted order, then slot p (thread t: p = t,
//                    t + THREADS, ...) goes to digit start + counts[d][j] + (p - local start of d),
//                    so consecutive slots of one digit are consecutive addresses.
// Stability: output index = digit start + pairs of that digit in earlier tiles + earlier in this tile.
#include <cub/block/block_scan.cuh>
#include <forgek/common.cuh>
#include <forgek/vec.cuh>

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRadix = 1 << RADIX_BITS;
constexpr int kWarps = THREADS / 32;
constexpr int kTile = THREADS * ITEMS;
static_assert(THREADS % 32 == 0 && THREADS >= kRadix, "thread d < radix owns digit d");
static_assert(kTile % 4 == 0, "tiles start on 16-byte boundaries");

__device__ __forceinline__ unsigned digit_of(unsigned key, int shift) { return (key >> shift) & (kRadix - 1); }

extern "C" __global__ void __launch_bounds__(THREADS)
rts_upsweep(const unsigned* __restrict__ keys,  // [N], N % 4 == 0
            unsigned* __restrict__ counts,      // [radix, tiles]
            int N, int pass) {
  // thread t -> 16-byte vectors t, t + THREADS, ... of the tile (ITEMS / 4 of them, rounded up).
  __shared__ unsigned histogram[kRadix];
  const int shift = pass * RADIX_BITS;
  const int tiles = gridDim.x;
  for (int d = threadIdx.x; d < kRadix; d += THREADS) histogram[d] = 0;
  __syncthreads();
  const int tile_first = blockIdx.x * kTile;
  const int tile_vectors = min(kTile, N - tile_first) / 4;  // N and tile_first are multiples of 4
  const uint4* src = reinterpret_cast<const uint4*>(keys + tile_first);
  constexpr int kVectorsPerThread = (kTile / 4 + THREADS - 1) / THREADS;
  uint4 v[kVectorsPerThread];
#pragma unroll
  for (int u = 0; u < kVectorsPerThread; ++u) {
    const int idx = u * THREADS + threadIdx.x;
    v[u] = idx < tile_vectors ? fk::ld_global_nc_na(src + idx) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int u = 0; u < kVectorsPerThread; ++u) {
    if (u * THREADS + threadIdx.x < tile_vectors) {
      atomicAdd(&histogram[digit_of(v[u].x, shift)], 1u);
      atomicAdd(&histogram[digit_of(v[u].y, shift)], 1u);
      atomicAdd(&histogram[digit_of(v[u].z, shift)], 1u);
      atomicAdd(&histogram[digit_of(v[u].w, shift)], 1u);
    }
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kRadix; d += THREADS) counts[static_cast<size_t>(d) * tiles + blockIdx.x] = histogram[d];
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
rts_scan(unsigned* __restrict__ counts,  // [radix, tiles], in place
         unsigned* __restrict__ totals,  // [radix]
         int tiles) {
  // CTA d -> row d; thread t -> tiles first + t for first = 0, SCAN_THREADS, ...; a running carry
  // joins the chunks.
  using BlockScan = cub::BlockScan<unsigned, SCAN_THREADS>;
  __shared__ typename BlockScan::TempStorage temp;
  unsigned* row = counts + static_cast<size_t>(blockIdx.x) * tiles;
  unsigned carry = 0;  // keys of this digit in the tiles already scanned
  for (int first = 0; first < tiles; first += SCAN_THREADS) {
    const int j = first + threadIdx.x;
    const unsigned c = j < tiles ? row[j] : 0u;
    unsigned before, chunk_total;
    BlockScan(temp).ExclusiveSum(c, before, chunk_total);
    if (j < tiles) row[j] = carry + before;
    carry += chunk_total;
    __syncthreads();  // temp is reused by the next chunk
  }
  if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

extern "C" __global__ void __launch_bounds__(THREADS)
rts_downsweep(const unsigned* __restrict__ keys_src, const unsigned* __restrict__ values_src,  // [N]
              const unsigned* __restrict__ counts,  // [radix, tiles] digit's keys in earlier tiles
              const unsigned* __restrict__ totals,  // [radix] keys per digit
              unsigned* __restrict__ keys_dst, unsigned* __restrict__ values_dst,  // [N]
              int N, int pass) {
  using BlockScan = cub::BlockScan<unsigned, THREADS>;
  __shared__ typename BlockScan::TempStorage scan_temp;
  extern __shared__ __align__(16) unsigned smem[];
  unsigned* keys_buf = smem;                             // [TILE] keys in local sorted order
  unsigned* values_buf = keys_buf + kTile;               // [TILE] their values
  unsigned* warp_counts = values_buf + kTile;            // [WARPS, radix] counters, then first slots
  unsigned* digit_base = warp_counts + kWarps * kRadix;  // [radix] global start - local start

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int shift = pass * RADIX_BITS;
  const int tile = blockIdx.x, tiles = gridDim.x;
  const int tile_first = tile * kTile;
  const bool full = tile_first + kTile <= N;
  const int warp_first = tile_first + warp * 32 * ITEMS;
  for (int i = threadIdx.x; i < kWarps * kRadix; i += THREADS) warp_counts[i] = 0;

  // warp-striped loads: item i of lane l is pair warp_first + 32*i + l
  unsigned keys[ITEMS], values[ITEMS], rank[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = warp_first + 32 * i + lane;
    const bool valid = full || idx < N;
    keys[i] = valid ? keys_src[idx] : 0u;
    values[i] = valid ? values_src[idx] : 0u;
  }
  __syncthreads();  // counters zeroed

  unsigned* my_counts = warp_counts + warp * kRadix;
  const unsigned lanes_upto_me = (2u << lane) - 1u;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const bool valid = full || warp_first + 32 * i + lane < N;
    const unsigned d = valid ? digit_of(keys[i], shift) : static_cast<unsigned>(kRadix);  // kRadix: no counter
    const unsigned peers = __match_any_sync(kFullMask, d);
    const int leader = 31 - __clz(peers);
    const unsigned upto_me = __popc(peers & lanes_upto_me);
    unsigned before = 0;
    if (lane == leader && valid) {
      before = my_counts[d];
      my_counts[d] = before + upto_me;
    }
    __syncwarp();  // the next item's leader may be another lane
    before = __shfl_sync(kFullMask, before, leader);
    rank[i] = before + upto_me - 1u;
  }
  __syncthreads();

  const int d = threadIdx.x;
  unsigned tile_count = 0, digit_total = 0;
  if (d < kRadix) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const unsigned c = warp_counts[w * kRadix + d];
      warp_counts[w * kRadix + d] = tile_count;
      tile_count += c;
    }
    digit_total = totals[d];
  }
  unsigned local_start, digit_start;
  BlockScan(scan_temp).ExclusiveSum(tile_count, local_start);
  __syncthreads();  // scan_temp reused
  BlockScan(scan_temp).ExclusiveSum(digit_total, digit_start);
  if (d < kRadix) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) warp_counts[w * kRadix + d] += local_start;
    digit_base[d] = digit_start + counts[static_cast<size_t>(d) * tiles + tile] - local_start;  // mod 2^32
  }
  __syncthreads();

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (full || warp_first + 32 * i + lane < N) {
      const unsigned slot = my_counts[digit_of(keys[i], shift)] + rank[i];
      keys_buf[slot] = keys[i];
      values_buf[slot] = values[i];
    }
  }
  __syncthreads();

  const int tile_valid = full ? kTile : N - tile_first;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int slot = i * THREADS + threadIdx.x;
    if (full || slot < tile_valid) {
      const unsigned key = keys_buf[slot];
      const unsigned at = digit_base[digit_of(key, shift)] + slot;
      keys_dst[at] = key;
      values_dst[at] = values_buf[slot];
    }
  }
}
