/* forgek
{
  "name": "radix_sort_pairs_onesweep",
  "mechanisms": ["warp_match_ranking", "block_scan", "smem_atomics", "memory_level_parallelism"],
  "controls": {"radix_bits": ["RADIX_BITS"], "items_per_thread": ["ITEMS"], "block_size": ["THREADS"],
               "memory_level_parallelism": ["VALUES_EARLY"], "min_ctas_per_sm": ["MIN_CTAS"],
               "early_counts": ["EARLY_COUNTS"], "warp_match_ranking": ["MATCH_BALLOT"],
               "exchange_buffers": ["ONE_BUFFER"]},
  "params": {"RADIX_BITS": [8, 7, 6], "ITEMS": [23, 12, 16, 20], "THREADS": [384, 256, 512], "VALUES_EARLY": [0, 1],
             "MIN_CTAS": [2, 1, 3], "EARLY_COUNTS": [1, 0], "MATCH_BALLOT": [0, 1], "ONE_BUFFER": [1, 0]},
  "let": {
    "passes": "ceil_div(32, RADIX_BITS)",
    "radix": "pow2(RADIX_BITS)",
    "tile": "THREADS*ITEMS",
    "tiles": "ceil_div(N, tile)",
    "sort_smem": "4*((2 - ONE_BUFFER)*tile + (THREADS/32 + 1)*radix)",
    "hist_ctas": "min(ceil_div(N, 4096), num_sms*4)"
  },
  "constraints": ["THREADS >= radix", "passes >= 4 && passes <= 6", "N < pow2(27)",
                  "MIN_CTAS*(sort_smem + 4096) <= 233472",
                  "65536 / (THREADS*MIN_CTAS) / 8 * 8 >= (3 + 3*VALUES_EARLY)*ITEMS + 8 + 4*(1 - EARLY_COUNTS)*min(1, (ITEMS > 12) + MATCH_BALLOT + 1 - VALUES_EARLY)"],
  "workspaces": [
    {"name": "keys_a",        "bytes": "4*N", "zero": false},
    {"name": "values_a",      "bytes": "4*N", "zero": false},
    {"name": "keys_b",        "bytes": "4*N", "zero": false},
    {"name": "values_b",      "bytes": "4*N", "zero": false},
    {"name": "digit_offsets", "bytes": "4*passes*radix", "zero": true},
    {"name": "status",        "bytes": "4*tiles*radix", "zero": true},
    {"name": "tile_counters", "bytes": "4*passes", "zero": true}
  ],
  "launches": [
    {"kernel": "onesweep_digit_histograms", "grid": ["hist_ctas"], "block": [256],
     "args": ["keys_in", "digit_offsets", "N"]},
    {"kernel": "onesweep_scan_digit_offsets", "grid": [1], "block": ["32*passes"], "args": ["digit_offsets"]},
    {"kernel": "onesweep_pass", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_in", "values_in", "keys_a", "values_a", "digit_offsets", "status", "tile_counters", "N", "0"]},
    {"kernel": "onesweep_pass", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_a", "values_a", "keys_b", "values_b", "digit_offsets", "status", "tile_counters", "N", "1"]},
    {"kernel": "onesweep_pass", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_b", "values_b", "keys_a", "values_a", "digit_offsets", "status", "tile_counters", "N", "2"]},
    {"kernel": "onesweep_pass", "when": "passes == 4", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_a", "values_a", "keys_out", "values_out", "digit_offsets", "status", "tile_counters", "N", "3"]},
    {"kernel": "onesweep_pass", "when": "passes > 4", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_a", "values_a", "keys_b", "values_b", "digit_offsets", "status", "tile_counters", "N", "3"]},
    {"kernel": "onesweep_pass", "when": "passes == 5", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_b", "values_b", "keys_out", "values_out", "digit_offsets", "status", "tile_counters", "N", "4"]},
    {"kernel": "onesweep_pass", "when": "passes > 5", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_b", "values_b", "keys_a", "values_a", "digit_offsets", "status", "tile_counters", "N", "4"]},
    {"kernel": "onesweep_pass", "when": "passes == 6", "grid": ["tiles"], "block": ["THREADS"], "smem": "sort_smem",
     "args": ["keys_a", "values_a", "keys_out", "values_out", "digit_offsets", "status", "tile_counters", "N", "5"]}
  ]
}
*/
// Onesweep LSD radix sort of (key, value) pairs (the design of CUB's DeviceRadixSort on sm80+):
// the keys are read once up front for the digit histograms of every pass, and then each pass reads
// and writes every pair exactly once, with no per-pass histogram launch.
//
//   1. onesweep_digit_histograms: counts[p][d] = keys whose digit p (bits [p*RADIX_BITS, +RADIX_BITS))
//      is d, for all passes p at once (one read of keys_in, 16-byte loads, shared-memory atomics into a
//      per-CTA histogram of passes x radix counters, then one global atomic per counter).
//   2. onesweep_scan_digit_offsets: warp p turns counts[p][*] into the exclusive scan over digits, in
//      place: where digit d's pairs start in the output of pass p.
//   3. onesweep_pass, once per digit (passes = ceil(32 / RADIX_BITS): 4, 5 or 6); the pairs travel
//      in -> a -> b -> a -> ... and the last pass (chosen by `when`) lands in keys_out / values_out.
//      A CTA takes the next tile id from an atomic counter (tiles are therefore started in id order,
//      so every tile it waits for is already running: no deadlock), and for its tile of
//      TILE = THREADS * ITEMS consecutive pairs:
//        warp w        -> pairs [w*32*ITEMS, (w+1)*32*ITEMS) of the tile, lane l -> items l, l+32, ...
//                         (warp-striped: coalesced 128-byte loads, and the order the ranking walks)
//        ranking       -> (order of EARLY_COUNTS 0; with 1, counting and the digit phase come first, below)
//                         for item i = 0..ITEMS-1: lanes with equal digits find each other with
//                         __match_any_sync; the highest such lane reads and advances the warp's private
//                         counter of that digit; rank = counter + lanes below me with my digit. The walk
//                         is in input order, so the ranks keep equal digits in input order (stable).
//        digit phase   -> thread d (d < radix) owns digit d: the exclusive scan of the warp counters down
//                         column d gives the tile's count of d, published at once to the look-back
//                         status as an aggregate (tile 0 publishes the digit's global start plus its
//                         count as an inclusive prefix); a block scan of the counts gives the tile-local
//                         start of each digit
//        local order   -> keys go to shared memory at slot = local start[d] + earlier warps + rank
//                         (no global offset needed, so this is done before waiting on earlier tiles)
//        look-back     -> thread d adds earlier tiles' counts of d (decoupled look-back) to get the
//                         digit's global start for this tile, then publishes its inclusive prefix;
//                         the values follow the keys into their slots
//        write-out     -> thread t writes local slots t, t + THREADS, ...: slot p goes to
//                         global start of its digit + (p - local start of its digit); neighbouring slots
//                         share a digit, so the scattered stores come out as runs of consecutive addresses
//      Stability: a pair's output index = digit start + pairs of that digit in earlier tiles + pairs of
//      that digit earlier in this tile (earlier warps, earlier items, lower lanes): input order kept.
//
// Look-back status: one 32-bit word per (tile, digit), shared by all passes so that only one pass's
// worth is zeroed: bits 31..27 hold the state (2*pass + 1: aggregate of this tile, 2*pass + 2:
// inclusive prefix through this tile; any smaller state is an earlier pass's word, i.e. not yet
// published in this pass), bits 26..0 the count (at most N <= 2^26). A partial last tile gives its
// missing items the digit `radix`, which no counter or slot holds.
// MIN_CTAS: CTAs of onesweep_pass that must fit on one SM (__launch_bounds__), which caps the registers
// at 65536 / (THREADS * MIN_CTAS); the constraint keeps ITEMS where that cap holds the tile's registers
// (keys, values, slots: 3 x ITEMS with VALUES_EARLY, else 2 x ITEMS; the constraint asks 6 x or 3 x
// ITEMS + 8, and 4 more for the ranking order of EARLY_COUNTS 0, which spilled 4 B at the cap) without
// spilling. One CTA's load phase then overlaps another's ranking and look-back.
// VALUES_EARLY 1 loads the tile's values together with its keys (all loads of the tile in flight at
// once, 3 x ITEMS registers live: keys, values, ranks); 0 loads them once the keys sit in shared
// memory (2 x ITEMS live), so that they are in flight during the look-back wait.
// EARLY_COUNTS 1 (CUB's "early counts" order) counts each warp's digits first (fire-and-forget shared
// atomics), runs the digit phase, then ranks: the leader of a digit group takes the group's slots with
// one atomicAdd on the warp's running slot of that digit, so ranks come out as final local slots (no
// second gather of counters) and the tile's counts are published before the ranking. 0 ranks first
// (leader load + store + __syncwarp per item) and adds each warp's digit start afterwards. Measured on
// the H100 (README.md): the order of 0 stalls on the short scoreboard and its counter gather is where
// most of its shared-load bank conflicts come from.
// MATCH_BALLOT: how a warp finds the lanes with its digit, match.any (0) or one ballot per digit bit (1).
// ONE_BUFFER 1 exchanges keys and then values through one TILE-sized buffer (keys written out first),
// halving the sort's shared memory, so that a tile of CUB's size (384 x 23) fits at 2 CTAs per SM;
// 0 keeps a buffer for each and writes a key and its value together.
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/atomic>
#include <forgek/common.cuh>
#include <forgek/vec.cuh>

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRadix = 1 << RADIX_BITS;                        // digits per pass
constexpr int kPasses = (32 + RADIX_BITS - 1) / RADIX_BITS;    // 4, 5 or 6
constexpr int kWarps = THREADS / 32;
constexpr int kTile = THREADS * ITEMS;                         // pairs per tile
constexpr int kHistThreads = 256;                              // block of onesweep_digit_histograms
constexpr int kHistUnroll = 4;                                 // 16-byte loads per thread in flight there
constexpr int kCountBits = 27;                                 // status word: count in the low 27 bits
constexpr unsigned kCountMask = (1u << kCountBits) - 1u;
static_assert(THREADS % 32 == 0 && THREADS >= kRadix, "thread d < radix owns digit d");
static_assert(kRadix % 32 == 0, "the offsets scan gives each lane radix/32 digits");
static_assert(2 * kPasses + 2 < 32, "status states fit in 5 bits");
static_assert(RADIX_BITS <= 8, "ONE_BUFFER keeps each written slot's digit in 8 bits");

// A look-back word holds its state and count in one 32-bit access, so it needs no ordering with any
// other memory access: relaxed GPU-scope atomics. (A release store would first wait for this thread's
// loads still in flight, e.g. the values, delaying the publication later tiles wait for.)
using StatusRef = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
__device__ __forceinline__ void publish(unsigned* word, unsigned state, unsigned count) {
  StatusRef(*word).store((state << kCountBits) | count, cuda::memory_order_relaxed);
}

__device__ __forceinline__ unsigned digit_of(unsigned key, int shift) { return (key >> shift) & (kRadix - 1); }

extern "C" __global__ void __launch_bounds__(kHistThreads)
onesweep_digit_histograms(const unsigned* __restrict__ keys,  // [N], N % 4 == 0
                          unsigned* __restrict__ counts,      // [passes, radix], zeroed, accumulated
                          int N) {
  // CTA b, thread t -> 16-byte vectors b*256 + t + k*stride (stride = 256 * grid), kHistUnroll of them
  // loaded before any is counted; each key bumps one shared counter per pass.
  __shared__ unsigned histogram[kPasses * kRadix];  // [passes, radix]
  for (int i = threadIdx.x; i < kPasses * kRadix; i += kHistThreads) histogram[i] = 0;
  __syncthreads();
  const int vectors = N / 4;
  const int stride = gridDim.x * kHistThreads;
  for (int first = blockIdx.x * kHistThreads + threadIdx.x; first < vectors; first += kHistUnroll * stride) {
    uint4 v[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      const int idx = first + u * stride;
      v[u] = idx < vectors ? fk::ld_global_nc_na(keys + 4 * idx) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      if (first + u * stride < vectors) {
        const unsigned k[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int p = 0; p < kPasses; ++p) atomicAdd(&histogram[p * kRadix + digit_of(k[j], p * RADIX_BITS)], 1u);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kPasses * kRadix; i += kHistThreads)
    if (histogram[i] != 0) atomicAdd(&counts[i], histogram[i]);
}

extern "C" __global__ void __launch_bounds__(32 * kPasses)
onesweep_scan_digit_offsets(unsigned* __restrict__ counts) {  // [passes, radix], in place
  // warp p -> pass p's counters; lane l -> digits [l*radix/32, (l+1)*radix/32); counts become the
  // exclusive scan over digits (where each digit's pairs start in that pass's output).
  using WarpScan = cub::WarpScan<unsigned>;
  __shared__ typename WarpScan::TempStorage temp[kPasses];
  constexpr int kPerLane = kRadix / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned* row = counts + warp * kRadix + lane * kPerLane;
  unsigned mine[kPerLane], sum = 0;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) mine[k] = row[k], sum += mine[k];
  unsigned running;
  WarpScan(temp[warp]).ExclusiveSum(sum, running);
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) row[k] = running, running += mine[k];
}

// Loads this warp's ITEMS warp-striped items of the tile: items[i] = src[warp_first + 32*i + lane]
// (a partial tile reads only indices below N; the rest are never used).
__device__ __forceinline__ void load_warp_striped(const unsigned* __restrict__ src, unsigned (&items)[ITEMS],
                                                  int warp_first, int lane, bool full, int N) {
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int idx = warp_first + 32 * i + lane;
    items[i] = (full || idx < N) ? src[idx] : 0u;
  }
}

// Decoupled look-back for digit `digit` of tile `tile` (> 0): walks tiles tile-1, tile-2, ... adding
// their aggregates until one has published its inclusive prefix (tile 0 always does, without waiting),
// polling a tile that has published nothing yet in this pass. Returns the digit's global start for
// this tile. Called by thread `digit` only.
__device__ __forceinline__ unsigned look_back(unsigned* status, int tile, int digit, int pass) {
  const unsigned aggregate_state = 2u * pass + 1u, prefix_state = 2u * pass + 2u;
  unsigned sum = 0;
  int j = tile - 1;
  while (true) {
    const unsigned word = StatusRef(status[static_cast<size_t>(j) * kRadix + digit]).load(cuda::memory_order_relaxed);
    const unsigned state = word >> kCountBits;
    if (state < aggregate_state) continue;  // not published in this pass yet: poll again
    sum += word & kCountMask;
    if (state == prefix_state) return sum;
    --j;
  }
}

using BlockScan = cub::BlockScan<unsigned, THREADS>;

// The lanes of this warp whose item has the same digit as mine (valid items only: a partial tile's
// missing items carry the digit kRadix and never group with a real digit). MATCH_BALLOT 0 asks the
// hardware (match.any); 1 builds the mask from one ballot per digit bit, ALU votes whose latency
// does not go through the short scoreboard the way match.any's does.
__device__ __forceinline__ unsigned lanes_with_my_digit(unsigned d, bool valid, bool full) {
#if MATCH_BALLOT
  unsigned peers = kFullMask;
  if (!full) {
    const unsigned v = __ballot_sync(kFullMask, valid);
    peers = valid ? v : ~v;
  }
#pragma unroll
  for (int b = 0; b < RADIX_BITS; ++b) {
    const bool bit = (d >> b) & 1u;
    const unsigned m = __ballot_sync(kFullMask, bit);
    peers &= bit ? m : ~m;
  }
  return peers;
#else
  (void)valid, (void)full;
  return __match_any_sync(kFullMask, d);
#endif
}

// Digit phase, thread d (< radix) owns digit d: column d of warp_counts ([WARPS, radix], each warp's
// count of d in this tile) becomes each warp's first local slot of d; the tile's count of d is
// published at once to the look-back (tile 0 publishes its inclusive prefix), so that later tiles
// can add it before this tile's own look-back is done. Every thread calls it (block scan inside);
// it ends with a barrier. Returns the tile's count of d and the keys of smaller digits in the tile.
__device__ __forceinline__ void digit_phase(unsigned* warp_counts, unsigned* status, const unsigned* digit_offsets,
                                            typename BlockScan::TempStorage& scan_temp, int tile, int pass,
                                            unsigned& tile_count, unsigned& local_start) {
  const int d = threadIdx.x;
  tile_count = 0;
  if (d < kRadix) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {  // column d: exclusive scan over the warps
      const unsigned c = warp_counts[w * kRadix + d];
      warp_counts[w * kRadix + d] = tile_count;
      tile_count += c;
    }
    unsigned* word = status + static_cast<size_t>(tile) * kRadix + d;
    if (tile == 0) publish(word, 2u * pass + 2u, digit_offsets[pass * kRadix + d] + tile_count);
    else publish(word, 2u * pass + 1u, tile_count);
  }
  BlockScan(scan_temp).ExclusiveSum(tile_count, local_start);
  if (d < kRadix) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) warp_counts[w * kRadix + d] += local_start;
  }
  __syncthreads();
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_CTAS)
onesweep_pass(const unsigned* __restrict__ keys_src, const unsigned* __restrict__ values_src,  // [N]
              unsigned* __restrict__ keys_dst, unsigned* __restrict__ values_dst,              // [N]
              const unsigned* __restrict__ digit_offsets,  // [passes, radix] exclusive scans
              unsigned* __restrict__ status,               // [tiles, radix] look-back words
              unsigned* __restrict__ tile_counters,        // [passes] next tile id of each pass
              int N, int pass) {
  __shared__ typename BlockScan::TempStorage scan_temp;
  __shared__ int tile_shared;
  extern __shared__ __align__(16) unsigned smem[];
  unsigned* keys_buf = smem;                     // [TILE] the tile's keys in local sorted order
#if ONE_BUFFER
  unsigned* values_buf = smem;                   // [TILE] then their values, same slots, same buffer
#else
  unsigned* values_buf = keys_buf + kTile;       // [TILE] their values, same slots
#endif
  unsigned* warp_counts = smem + (2 - ONE_BUFFER) * kTile;  // [WARPS, radix] per-warp digit counters,
                                                            //   then each warp's first local slot of each digit
  unsigned* digit_base = warp_counts + kWarps * kRadix;  // [radix] global start - local start

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int shift = pass * RADIX_BITS;
  for (int i = threadIdx.x; i < kWarps * kRadix; i += THREADS) warp_counts[i] = 0;
  if (threadIdx.x == 0) tile_shared = static_cast<int>(atomicAdd(tile_counters + pass, 1u));
  __syncthreads();
  const int tile = tile_shared;
  const int tile_first = tile * kTile;
  const bool full = tile_first + kTile <= N;
  const int warp_first = tile_first + warp * 32 * ITEMS;

  unsigned keys[ITEMS], values[ITEMS], slot[ITEMS];  // slot: the item's local slot in sorted order
  load_warp_striped(keys_src, keys, warp_first, lane, full, N);
#if VALUES_EARLY
  load_warp_striped(values_src, values, warp_first, lane, full, N);
#endif

  unsigned* my_counts = warp_counts + warp * kRadix;
  const unsigned lanes_upto_me = (2u << lane) - 1u;  // lanes 0..lane
  unsigned tile_count, local_start;  // this tile's keys of digit d = threadIdx.x, and of smaller digits
#if EARLY_COUNTS
  // Counting first: each warp's histogram of its items (shared atomics whose result nobody waits for),
  // so that the digit phase (and the publication later tiles wait for) comes before the ranking, and
  // the ranking lands straight on local slots.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (full || warp_first + 32 * i + lane < N) atomicAdd(&my_counts[digit_of(keys[i], shift)], 1u);
  __syncthreads();
  digit_phase(warp_counts, status, digit_offsets, scan_temp, tile, pass, tile_count, local_start);

  // Ranking, in input order (stable): the highest lane of each digit group takes the group's slots
  // with one atomic on the warp's slot counter (its returned value feeds the shuffle, so the next
  // item's atomic, maybe by another lane, cannot overtake it); the key goes to its slot at once.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const bool valid = full || warp_first + 32 * i + lane < N;
    const unsigned d = valid ? digit_of(keys[i], shift) : static_cast<unsigned>(kRadix);
    const unsigned peers = lanes_with_my_digit(d, valid, full);
    const int leader = 31 - __clz(peers);
    const unsigned upto_me = __popc(peers & lanes_upto_me);  // at the leader: the whole group
    unsigned first = 0;
    if (lane == leader && valid) first = atomicAdd(&my_counts[d], upto_me);
    slot[i] = __shfl_sync(kFullMask, first, leader) + upto_me - 1u;
    if (valid) keys_buf[slot[i]] = keys[i];
  }
#else
  // Ranking: slot[i] = keys of the same digit earlier in this warp's items (input order), counted in
  // the warp's private counters (the leader reads and advances them).
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const bool valid = full || warp_first + 32 * i + lane < N;
    const unsigned d = valid ? digit_of(keys[i], shift) : static_cast<unsigned>(kRadix);
    const unsigned peers = lanes_with_my_digit(d, valid, full);
    const int leader = 31 - __clz(peers);                 // highest lane of my digit
    const unsigned upto_me = __popc(peers & lanes_upto_me);  // at the leader: the whole group
    unsigned before = 0;
    if (lane == leader && valid) {
      before = my_counts[d];
      my_counts[d] = before + upto_me;
    }
    __syncwarp();  // the next item's leader (maybe another lane) reads what this one wrote
    before = __shfl_sync(kFullMask, before, leader);
    slot[i] = before + upto_me - 1u;
  }
  __syncthreads();
  digit_phase(warp_counts, status, digit_offsets, scan_temp, tile, pass, tile_count, local_start);

  // Local order (needs no global offset, so it is done before the look-back wait):
  // pair (warp, i, lane) -> slot = its warp's first slot of the digit + rank.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (full || warp_first + 32 * i + lane < N) {
      slot[i] += my_counts[digit_of(keys[i], shift)];
      keys_buf[slot[i]] = keys[i];
    }
  }
#endif
#if !VALUES_EARLY
  load_warp_striped(values_src, values, warp_first, lane, full, N);  // keys are dead: reuse their registers
#endif

  // Look-back: the digit's global start for this tile, then this tile's inclusive prefix published.
  const int d = threadIdx.x;
  if (d < kRadix) {
    unsigned global_start;
    if (tile == 0) {
      global_start = digit_offsets[pass * kRadix + d];
    } else {
      global_start = look_back(status, tile, d, pass);
      publish(status + static_cast<size_t>(tile) * kRadix + d, 2u * pass + 2u, global_start + tile_count);
    }
    digit_base[d] = global_start - local_start;  // modulo 2^32: + local slot gives the global index
  }
  const int tile_valid = full ? kTile : N - tile_first;
#if ONE_BUFFER
  __syncthreads();
  // Keys out: thread t -> slots t, t + THREADS, ...; neighbouring slots share a digit, so the scattered
  // stores come out as runs of consecutive addresses. Each slot's digit is kept (4 per register) for
  // the values, which overwrite the keys in the buffer.
  constexpr int kPacked = (ITEMS + 3) / 4;
  unsigned out_digits[kPacked];
#pragma unroll
  for (int k = 0; k < kPacked; ++k) out_digits[k] = 0;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int s = i * THREADS + threadIdx.x;
    if (full || s < tile_valid) {
      const unsigned key = keys_buf[s];
      const unsigned dig = digit_of(key, shift);
      out_digits[i / 4] |= dig << (8 * (i % 4));
      keys_dst[digit_base[dig] + s] = key;
    }
  }
  __syncthreads();  // every key read out before the values take the buffer
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (full || warp_first + 32 * i + lane < N) values_buf[slot[i]] = values[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int s = i * THREADS + threadIdx.x;
    if (full || s < tile_valid) values_dst[digit_base[(out_digits[i / 4] >> (8 * (i % 4))) & 0xffu] + s] = values_buf[s];
  }
#else
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (full || warp_first + 32 * i + lane < N) values_buf[slot[i]] = values[i];
  __syncthreads();

  // Write-out: thread t -> slots t, t + THREADS, ... (slots below the tile's valid count); neighbouring
  // slots share a digit, so the scattered stores come out as runs of consecutive addresses.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int s = i * THREADS + threadIdx.x;
    if (full || s < tile_valid) {
      const unsigned key = keys_buf[s];
      const unsigned at = digit_base[digit_of(key, shift)] + s;
      keys_dst[at] = key;
      values_dst[at] = values_buf[s];
    }
  }
#endif
}
