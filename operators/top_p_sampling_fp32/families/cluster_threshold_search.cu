/* forgek
{
  "name": "top_p_sampling_cluster_threshold_search",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "tma", "smem_row_cache", "radix_select",
                 "smem_atomics", "block_scan", "warp_shuffle_reduction"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "block_size": ["THREADS"], "radix_select": ["FIRST_SHIFT"]},
  "params": {"CLUSTER": [8, 16, 4], "THREADS": [512, 256, 1024], "FIRST_SHIFT": [16, 18, 14]},
  "let": {"slice_vectors": "ceil_div(V/4, CLUSTER)", "slice_bytes": "16*slice_vectors"},
  "constraints": ["V % 4 == 0", "slice_bytes + 12288 <= 232448"],
  "launches": [
    {"kernel": "top_p_sampling_cluster_threshold_search", "grid": ["CLUSTER*M"], "block": ["THREADS"],
     "cluster": ["CLUSTER"], "smem": "slice_bytes", "args": ["logits", "u", "samples", "top_p", "M", "V"]}
  ]
}
*/
// Top-p sampling with each row split across a thread-block cluster and held on chip: one DRAM read
// of the logits, then a sort-free threshold search and the column-order walk over shared memory.
//
// The reference streams the 501 KiB row six times through one CTA (one SM per row: a batch of 1 or
// 16 rows leaves the GPU idle), with float atomics on 256 top-digit bins that most logits collide in.
// Here a row (128256 fp32 does not fit one SM's shared memory) is cut into CLUSTER slices:
//   row i        -> the cluster of CTAs blockIdx.x = i*CLUSTER ... i*CLUSTER + CLUSTER-1
//   CTA rank k   -> float4 [k*per_cta, min(V/4, (k+1)*per_cta)) of the row, per_cta = ceil(V/4 / CLUSTER),
//                   copied once into `slice` (dynamic shared memory) by the bulk-copy engine
//   thread t     -> float4 t, t+THREADS, ... of the slice in every pass over it
//   warp w       -> a contiguous run of the slice in the final column-order walk, lanes 32 apart
// Every cluster-wide quantity is merged through distributed shared memory, each CTA reading all
// CLUSTER partials in rank order, so every CTA computes the same bits and takes the same branches.
//   1. m = max of the row (cluster max exchange).
//   2. Threshold search over the order-preserving 32-bit keys: the interval [lo, hi] holds theta,
//      the largest key whose mass (sum of w = exp(x - m) over keys >= it) reaches top_p * W. A round
//      splits [lo, hi] from the top into 256 buckets of 2^s keys, adds the w of the keys inside into
//      shared bins (float atomics), merges the bins over the cluster, and keeps the first bucket
//      whose cumulative mass, plus the mass above hi, reaches top_p * W.
//      Round 0 passes over every logit: it computes W, rewrites the slice as keys (later passes only
//      compare integers) and uses buckets of 2^FIRST_SHIFT keys below key(m): 2^16 keys are 1/128 of
//      a binade, so the 255 buckets cover m down to about m/4 finely and the logits further down,
//      the bulk of the row, fall in bucket 255, which is never accumulated (no collisions there).
//      Later rounds take s = bit_length(hi - lo) - 8, touch only the few candidates in [lo, hi] and
//      end with s = 0 (one key per bucket): theta is exact. LLM-like rows finish in 3 rounds.
//   3. Sampling in column order: warp w sums the nucleus weights (keys >= theta) of its run; CTA
//      totals are exchanged; the CTA whose running total first exceeds r = u * Z finds the warp, and
//      that warp alone walks its run with a warp scan to the first column past r. Fallbacks (r not
//      exceeded because of rounding) take the last nucleus column of the cluster, CTA or warp.
#include <cub/block/block_scan.cuh>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/reduce.cuh>
#include <forgek/tma.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;
// Register cap for 1536 resident threads per SM (3 CTAs of 512 at CLUSTER 8 fit shared memory too):
// without it ptxas squeezes 512-thread CTAs to 32 registers and spills.
constexpr int kMinBlocks = 1536 / THREADS;
constexpr int kBuckets = 256;            // buckets per search round
constexpr int kSkipped = kBuckets - 1;   // bucket 255 is never accumulated (only chosen as a fallback)
constexpr unsigned kCopyBytes = 32768;   // bytes per bulk copy of the slice
constexpr unsigned kFull = 0xffffffffu;

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned integers.
__device__ __forceinline__ unsigned order_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
// The float whose order key is k (the inverse of order_key).
__device__ __forceinline__ float key_value(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

extern "C" __global__ void __launch_bounds__(THREADS, kMinBlocks)
top_p_sampling_cluster_threshold_search(const float* __restrict__ logits,  // [M, V] row-major
                                        const float* __restrict__ u,       // [M]
                                        int* __restrict__ samples,         // [M]
                                        float top_p, int M, int V) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  extern __shared__ __align__(128) float4 slice[];  // [count] this CTA's columns: floats, keys after round 0
  __shared__ typename BlockScan::TempStorage scan_temp;
  __shared__ float published[2][kBuckets + 1];  // [round parity][bucket] this CTA's bucket masses, [256]: W
  __shared__ float reach[kBuckets];             // [bucket b] cluster mass of buckets 0..b (inclusive scan)
  __shared__ float cta_max;                     // published: max of this slice
  __shared__ float row_w;                       // round 0: W of the row
  __shared__ int chosen;                        // this round's bucket
  __shared__ float warp_mass[kWarps];           // [warp] nucleus mass of the warp's run
  __shared__ int warp_last[kWarps];             // [warp] last nucleus column of the run, or -1
  __shared__ float cta_mass;                    // published: nucleus mass of this slice
  __shared__ int cta_last;                      // published: last nucleus column of this slice, or -1
  __shared__ int walk_warp;                     // the warp that walks, or -1
  __shared__ float walk_from, walk_target;      // its starting running mass and r
  __shared__ unsigned long long landed;         // mbarrier: the slice's bytes have arrived

  const int rank = static_cast<int>(fk::cluster_ctarank());
  const int row = blockIdx.x / CLUSTER;  // the grid is CLUSTER*M CTAs: every row is in range
  const int tid = threadIdx.x;
  const int lane = tid % kWarp, warp = tid / kWarp;
  const int vectors = V / 4;             // V % 4 == 0: every row starts 16-byte aligned
  const int per_cta = (vectors + CLUSTER - 1) / CLUSTER;
  const int begin = min(vectors, rank * per_cta);
  const int count = min(vectors, begin + per_cta) - begin;
  uint4* keys = reinterpret_cast<uint4*>(slice);

  // ---- load: the slice into shared memory, read once (evict-first in L2) -----------------------
  if (tid == 0) {
    fk::mbar_init(&landed, 1);
    fk::fence_barrier_init();
    const unsigned bytes = static_cast<unsigned>(count) * 16u;
    const char* src = reinterpret_cast<const char*>(logits + static_cast<size_t>(row) * V + 4 * static_cast<size_t>(begin));
    const unsigned long long policy = fk::policy_evict_first();
    fk::mbar_arrive_expect_tx(&landed, bytes);
    for (unsigned off = 0; off < bytes; off += kCopyBytes)
      fk::bulk_load_hint(reinterpret_cast<char*>(slice) + off, src + off, min(kCopyBytes, bytes - off), &landed, policy);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  fk::mbar_wait(&landed, 0);

  // ---- 1. m: cluster max ------------------------------------------------------------------------
  float local_max = fk::neg_inf();
  for (int q = tid; q < count; q += THREADS) {
    const float4 f = slice[q];
    local_max = fmaxf(local_max, fmaxf(fmaxf(f.x, f.y), fmaxf(f.z, f.w)));
  }
  const float slice_max = fk::block_max(local_max);
  if (tid == 0) cta_max = slice_max;
  fk::cluster_sync();
  // Lane c < CLUSTER of every warp reads rank c's max; the max is exact in any order.
  const float m = fk::warp_max(lane < CLUSTER ? fk::ld_shared_cluster_f32(fk::map_shared_rank(&cta_max, lane))
                                              : fk::neg_inf());

  // ---- 2. threshold search (block- and cluster-uniform state) ---------------------------------
  // theta in [lo, hi]; every key of the row is <= hi (a zero max may be -0 while a +0 is present)
  unsigned lo = 0, hi = order_key(m == 0.f ? 0.f : m);
  float above = 0.f;                   // mass of the keys > hi, merged over the cluster
  float needed = 0.f;                  // top_p * W, known after round 0
  int round = 0;
  do {
    const unsigned width = hi - lo;                                  // > 0 inside the loop
    const int fit = max(0, 32 - __clz(static_cast<int>(width)) - 8);  // shift leaving <= 256 buckets
    const int shift = round == 0 ? min(FIRST_SHIFT, fit) : fit;
    const unsigned last = min(255u, width >> shift);  // the lowest bucket, holding lo
    float* bins = published[round & 1];  // peers read the other parity's bins until this round's sync
    for (int b = tid; b <= kBuckets; b += THREADS) bins[b] = 0.f;
    __syncthreads();

    // bucket d of key k: (hi - k) >> shift, d = 0 holds hi; bucket 255 is not accumulated.
    if (round == 0) {
      float w_sum = 0.f;
      for (int q = tid; q < count; q += THREADS) {
        const float4 f = slice[q];
        const float x[4] = {f.x, f.y, f.z, f.w};
        unsigned k[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          k[c] = order_key(x[c]);
          const float w = __expf(x[c] - m);
          w_sum += w;
          const unsigned d = (hi - k[c]) >> shift;
          if (d < kSkipped) atomicAdd(&bins[d], w);
        }
        keys[q] = make_uint4(k[0], k[1], k[2], k[3]);  // this thread's own vector: no race
      }
      const float slice_w = fk::block_sum(w_sum);  // ends with a barrier
      if (tid == 0) bins[kBuckets] = slice_w;
    } else {
      for (int q = tid; q < count; q += THREADS) {
        const uint4 kv = keys[q];
        const unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          if (k[c] - lo <= width) {  // a candidate: lo <= k <= hi
            const unsigned d = (hi - k[c]) >> shift;
            if (d < kSkipped) atomicAdd(&bins[d], __expf(key_value(k[c]) - m));
          }
        }
      }
    }
    fk::cluster_sync();  // every CTA's bins (and round 0's W) are complete and visible cluster-wide

    // Merge: thread b < 256 totals bucket b over the ranks in rank order; thread 0 also totals W.
    if (tid == 0) {
      chosen = static_cast<int>(last);  // the fallback when rounding leaves no bucket reaching
      if (round == 0) {
        float w = 0.f;
#pragma unroll
        for (int c = 0; c < CLUSTER; ++c) w += fk::ld_shared_cluster_f32(fk::map_shared_rank(&bins[kBuckets], c));
        row_w = w;
      }
    }
    float merged = 0.f;
    if (tid < kBuckets) {
#pragma unroll
      for (int c = 0; c < CLUSTER; ++c) merged += fk::ld_shared_cluster_f32(fk::map_shared_rank(&bins[tid], c));
    }
    float incl;
    BlockScan(scan_temp).InclusiveSum(merged, incl);  // threads >= 256 add 0
    if (tid < kBuckets) reach[tid] = incl;
    __syncthreads();
    if (round == 0) needed = top_p * row_w;
    // The first bucket whose cumulative mass reaches `needed` holds theta.
    if (tid < kSkipped && tid <= static_cast<int>(last) && above + reach[tid] >= needed) atomicMin(&chosen, tid);
    __syncthreads();
    const unsigned d = static_cast<unsigned>(chosen);
    if (d > 0) above += reach[d - 1];  // the buckets above d
    const unsigned new_hi = hi - (d << shift);
    lo = d == last ? lo : new_hi - ((1u << shift) - 1u);  // bucket `last` reaches down to lo
    hi = new_hi;
    ++round;
  } while (lo < hi);  // uniform: every CTA holds the same lo and hi
  const unsigned theta = lo;

  // ---- 3. sampling in column order ------------------------------------------------------------
  // warp w -> vectors [w_begin, w_end) of the slice, lane l -> w_begin + l, + 32, ...
  const int per_warp = (count + kWarps - 1) / kWarps;
  const int w_begin = min(count, warp * per_warp);
  const int w_end = min(count, w_begin + per_warp);
  float lane_mass = 0.f;
  int lane_last = -1;
  for (int q = w_begin + lane; q < w_end; q += kWarp) {
    const uint4 kv = keys[q];
    const unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (k[c] >= theta) lane_mass += __expf(key_value(k[c]) - m), lane_last = 4 * (begin + q) + c;
  }
  const float run_mass = fk::warp_sum(lane_mass);
  const int run_last = __reduce_max_sync(kFull, lane_last);
  if (lane == 0) warp_mass[warp] = run_mass, warp_last[warp] = run_last;
  __syncthreads();
  if (tid == 0) {
    float t = 0.f;
    int l = -1;
    for (int w = 0; w < kWarps; ++w) t += warp_mass[w], l = max(l, warp_last[w]);
    cta_mass = t, cta_last = l;
  }
  fk::cluster_sync();  // every CTA's (mass, last) is visible

  if (tid == 0) {
    float mass[CLUSTER];  // [rank] nucleus mass of each slice
    int last_col = -1;    // last nucleus column of the row
#pragma unroll
    for (int c = 0; c < CLUSTER; ++c) {
      mass[c] = fk::ld_shared_cluster_f32(fk::map_shared_rank(&cta_mass, c));
      last_col = max(last_col, static_cast<int>(fk::ld_shared_cluster_u32(fk::map_shared_rank(&cta_last, c))));
    }
    float z = 0.f;
#pragma unroll
    for (int c = 0; c < CLUSTER; ++c) z += mass[c];
    const float r = u[row] * z;
    // The slice where the running nucleus mass first exceeds r.
    float before = 0.f, from = 0.f;
    int crossing = -1;
#pragma unroll
    for (int c = 0; c < CLUSTER; ++c) {
      const float next = before + mass[c];
      if (crossing < 0 && next > r) crossing = c, from = before;
      before = next;
    }
    int walk = -1;
    if (crossing < 0) {
      if (rank == 0) samples[row] = last_col;  // r >= Z after rounding: the last nucleus column
    } else if (crossing == rank) {
      for (int w = 0; w < kWarps; ++w) {  // the run where it first exceeds r
        const float next = from + warp_mass[w];
        if (next > r) {
          walk = w;
          break;
        }
        from = next;
      }
      if (walk < 0) samples[row] = cta_last;
    }
    walk_warp = walk, walk_from = from, walk_target = r;
  }
  __syncthreads();
  fk::cluster_arrive();  // done reading peers' shared memory; wait for theirs only before leaving

  if (warp == walk_warp) {  // one warp of one CTA per row
    const float r = walk_target;
    float running = walk_from;
    bool found = false;
    for (int q0 = w_begin; q0 < w_end; q0 += kWarp) {
      const int q = q0 + lane;
      float w[4] = {0.f, 0.f, 0.f, 0.f};
      unsigned in = 0;  // bit c: column 4*(begin+q)+c is in the nucleus
      if (q < w_end) {
        const uint4 kv = keys[q];
        const unsigned k[4] = {kv.x, kv.y, kv.z, kv.w};
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (k[c] >= theta) w[c] = __expf(key_value(k[c]) - m), in |= 1u << c;
      }
      const float lane_sum = w[0] + w[1] + w[2] + w[3];
      float incl = lane_sum;  // inclusive scan over the lanes (column order)
#pragma unroll
      for (int o = 1; o < kWarp; o *= 2) {
        const float y = __shfl_up_sync(kFull, incl, o);
        if (lane >= o) incl += y;
      }
      const float prev = __shfl_up_sync(kFull, incl, 1);  // the lanes before this one
      float acc = running + (lane > 0 ? prev : 0.f);
      int hit = -1;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        acc += w[c];
        if (hit < 0 && (in >> c & 1u) && acc > r) hit = c;
      }
      const unsigned hits = __ballot_sync(kFull, hit >= 0);
      if (hits != 0) {
        if (lane == __ffs(hits) - 1) samples[row] = 4 * (begin + q) + hit;
        found = true;
        break;  // uniform: hits is the same in every lane
      }
      running += __shfl_sync(kFull, incl, kWarp - 1);
    }
    if (!found && lane == 0) samples[row] = warp_last[warp];
  }
  fk::cluster_wait();  // no CTA leaves while a peer may still read its shared memory
}
