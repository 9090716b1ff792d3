/* forgek
{
  "name": "topk_rows_stream_filter_radix_select",
  "mechanisms": ["mbarrier_pipeline", "memory_level_parallelism", "radix_select", "smem_atomics", "warp_shuffle_reduction"],
  "params": {"THREADS": 512, "TILE": 4096, "STAGES": 8, "CAP": 8192, "SOFT": 1024},
  "let": {"smem_bytes": "STAGES*TILE*4 + CAP*8"},
  "constraints": ["N % 4 == 0", "K <= 64", "K <= N", "K <= SOFT", "SOFT + TILE <= CAP",
                  "TILE % (4*THREADS) == 0", "THREADS >= 256", "smem_bytes <= 225*1024"],
  "launches": [
    {"kernel": "topk_rows_reference", "grid": ["M"], "block": ["THREADS"], "smem": "smem_bytes",
     "args": ["x", "values", "indices", "M", "N", "K"]}
  ]
}
*/
// Expert top-K per row of an fp32 [M, N] matrix: one pass over x from DRAM, then radix selects on chip.
//
// One CTA per row (M = 128 rows on 132 SMs); x is read exactly once. The row flows through a ring of
// STAGES smem tiles filled by 1-D bulk copies (cp.async.bulk, one thread, mbarrier completion), so
// 7 tiles (112 KB) are in flight per SM: Little's law asks for ~60 KB at ~30 GB/s per SM and ~2 us
// loaded latency. Measured 38 us on an H200, 41 % of the copy bound: the pace is set by the CTA's
// serial chain (tile waits, barriers, the selects), not by DRAM; splitting a row over a cluster of
// 2-8 CTAs was slower (README.md has the numbers).
//   stream   each tile's elements whose order key is >= thr are appended (warp-aggregated, one smem
//            atomic per warp) to a candidate buffer of (raw bits, column) pairs. thr starts at 0, so
//            tile 0 is appended whole.
//   compact  when the buffer holds more than SOFT entries after a tile, a radix select keeps exactly
//            the K first entries in (value desc, column asc) order and sets thr = (K-th key) + 1.
//            That is safe because every later column is larger: an element equal to the K-th value
//            comes after it, and after all K kept ones. After tile 0 thr admits ~1.2 % of N(0,1)
//            data, after the next compaction ~0.1 %, so the buffer stays small and the row is read once.
//   finish   the same select on the final buffer, then a rank sort of the K winners (K <= 64).
// The select runs 8-bit digits of the key, most significant first, over the buffer only, and stops
// as soon as the bin holding the K-th entry is taken whole; if the K-th key is tied, 8-bit digits of
// the column pick the lowest columns among the tied. Every pass is exact, so adversarial inputs (all
// equal, few distinct values) are only slower, never wrong: thr then rises above the tie at once.
// -0.0 and +0.0 share one key (the golden compares floats: they are equal and ordered by column);
// outputs are the input's bits, so -0.0 stays -0.0.
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kVecPerThread = TILE / 4 / THREADS;  // float4 per thread per tile

// Order-preserving key: a < b as floats (no NaN) iff key(a) < key(b) as unsigned; -0.0 maps to +0.0's key.
__device__ __forceinline__ unsigned order_key(unsigned bits) {
  const unsigned key = bits ^ (static_cast<unsigned>(static_cast<int>(bits) >> 31) | 0x80000000u);
  return key == 0x7fffffffu ? 0x80000000u : key;
}

// Thread 0 only: arm the stage's barrier for `bytes` and start one bulk copy global -> smem.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  fk::mbar_arrive_expect_tx(bar, bytes);
  fk::bulk_load(dst, src, bytes, bar);
}

struct SelectShared {
  unsigned hist[256];
  unsigned digit, before, in_bin;  // the chosen bin, the entries ahead of it, the entries in it
  unsigned sel_bits[64];           // [K] the selected entries, in no particular order
  int sel_col[64];
  int sel_count;
  unsigned min_key;
};

// Warp 0: the digit whose bin holds the need-th entry when bins are walked from 255 down (descending)
// or from 0 up; writes it with the count of entries in the bins walked before it and in it.
__device__ __forceinline__ void find_digit(SelectShared& s, unsigned need, bool descending) {
  const int lane = threadIdx.x % 32;
  unsigned c[8], total = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int b = descending ? 255 - (8 * lane + i) : 8 * lane + i;
    c[i] = s.hist[b];
    total += c[i];
  }
  unsigned incl = total;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const unsigned y = __shfl_up_sync(kFullMask, incl, o);
    if (lane >= o) incl += y;
  }
  unsigned run = incl - total;  // entries in the bins of earlier lanes
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (run < need && run + c[i] >= need) {
      s.digit = descending ? 255 - (8 * lane + i) : 8 * lane + i;
      s.before = run;
      s.in_bin = c[i];
    }
    run += c[i];
  }
}

// All threads: copy the K first entries of buf[0, n) in (value desc, column asc) order to
// s.sel_* (unordered) and their smallest key to s.min_key. Needs n >= K; columns are distinct.
__device__ void select_first_k(const unsigned* buf_bits, const int* buf_col, int n, int K, SelectShared& s) {
  const int tid = threadIdx.x;
  unsigned prefix = 0, mask = 0, need = K;
  bool whole_bin = false;  // the entries matching prefix under mask are all selected
  for (int shift = 24; shift >= 0 && !whole_bin; shift -= 8) {
    for (int b = tid; b < 256; b += THREADS) s.hist[b] = 0;
    __syncthreads();
    for (int e = tid; e < n; e += THREADS) {
      const unsigned key = order_key(buf_bits[e]);
      if ((key & mask) == prefix) atomicAdd(&s.hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (tid < 32) find_digit(s, need, true);
    __syncthreads();
    prefix |= s.digit << shift;
    mask |= 255u << shift;
    need -= s.before;
    whole_bin = s.in_bin == need;
  }
  // The K-th key is tied and only `need` of its entries fit: the lowest columns among them.
  unsigned cprefix = 0, cmask = 0;
  bool cwhole = whole_bin;
  for (int shift = 24; shift >= 0 && !cwhole; shift -= 8) {
    __syncthreads();  // every thread has read s.digit of the previous pass
    for (int b = tid; b < 256; b += THREADS) s.hist[b] = 0;
    __syncthreads();
    for (int e = tid; e < n; e += THREADS) {
      const unsigned col = static_cast<unsigned>(buf_col[e]);
      if (order_key(buf_bits[e]) == prefix && (col & cmask) == cprefix) atomicAdd(&s.hist[(col >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (tid < 32) find_digit(s, need, false);
    __syncthreads();
    cprefix |= s.digit << shift;
    cmask |= 255u << shift;
    need -= s.before;
    cwhole = s.in_bin == need;
  }
  if (tid == 0) s.sel_count = 0, s.min_key = 0xffffffffu;
  __syncthreads();
  for (int e = tid; e < n; e += THREADS) {
    const unsigned bits = buf_bits[e];
    const unsigned key = order_key(bits);
    const unsigned col = static_cast<unsigned>(buf_col[e]);
    const bool take = (key & mask) > prefix ||
                      ((key & mask) == prefix && (whole_bin || (col & cmask) <= cprefix));
    if (take) {
      const int p = atomicAdd(&s.sel_count, 1);
      s.sel_bits[p] = bits;
      s.sel_col[p] = static_cast<int>(col);
      atomicMin(&s.min_key, key);
    }
  }
  __syncthreads();
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
topk_rows_reference(const float* __restrict__ x,  // [M, N] row-major
                    float* __restrict__ values,   // [M, K] descending
                    int* __restrict__ indices,    // [M, K]
                    int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  float* tiles = reinterpret_cast<float*>(smem);                             // [STAGES][TILE]
  unsigned* buf_bits = reinterpret_cast<unsigned*>(smem + STAGES * TILE * 4);  // [CAP] raw float bits
  int* buf_col = reinterpret_cast<int*>(buf_bits + CAP);                    // [CAP] columns
  __shared__ __align__(8) unsigned long long full[STAGES];
  __shared__ SelectShared sel;
  __shared__ int count;   // entries in the buffer
  __shared__ unsigned thr;  // append keys >= thr

  const int row = blockIdx.x;
  if (row >= M) return;
  const int tid = threadIdx.x, lane = tid % 32;
  const float* xrow = x + static_cast<size_t>(row) * N;
  const int ntiles = (N + TILE - 1) / TILE;
  auto tile_floats = [&](int t) { return min(TILE, N - t * TILE); };

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (int t = 0; t < STAGES && t < ntiles; ++t)
      bulk_load(tiles + t * TILE, xrow + t * TILE, 4u * tile_floats(t), &full[t]);
    count = 0;
    thr = 0;
  }
  __syncthreads();

  for (int t = 0; t < ntiles; ++t) {
    const int stage = t % STAGES;
    fk::mbar_wait(&full[stage], (t / STAGES) & 1);
    const unsigned th = thr;
    const int nvec = tile_floats(t) / 4;
    const uint4* tile = reinterpret_cast<const uint4*>(tiles + stage * TILE);
    unsigned v[4 * kVecPerThread];  // this thread's raw bits of the tile
    unsigned pass = 0;              // bit i: v[i] is appended
#pragma unroll
    for (int i = 0; i < kVecPerThread; ++i) {
      const int q = tid + i * THREADS;
      const uint4 f = q < nvec ? tile[q] : make_uint4(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
      v[4 * i + 0] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (q < nvec && order_key(v[4 * i + c]) >= th) pass |= 1u << (4 * i + c);
    }
    const unsigned mine = __popc(pass);
    bool over = false;  // lane 31 of a warp that appended: the buffer then held more than SOFT
    if (__any_sync(kFullMask, mine != 0)) {
      unsigned incl = mine;
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const unsigned y = __shfl_up_sync(kFullMask, incl, o);
        if (lane >= o) incl += y;
      }
      int base = 0;
      if (lane == 31) base = atomicAdd(&count, static_cast<int>(incl)), over = base + static_cast<int>(incl) > SOFT;
      int pos = __shfl_sync(kFullMask, base, 31) + static_cast<int>(incl - mine);
#pragma unroll
      for (int i = 0; i < 4 * kVecPerThread; ++i) {
        if (pass & (1u << i)) {
          buf_bits[pos] = v[i];
          buf_col[pos] = t * TILE + 4 * (tid + (i / 4) * THREADS) + i % 4;
          ++pos;
        }
      }
    }
    // The stage is consumed and count is final. The post-add counts only grow, so the buffer is over
    // SOFT iff some warp saw it so; deciding at this barrier keeps a fast thread's next appends from
    // racing a slow thread's read of count.
    const bool compact = __syncthreads_or(over) && t + 1 < ntiles;
    if (tid == 0 && t + STAGES < ntiles) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      bulk_load(tiles + stage * TILE, xrow + (t + STAGES) * TILE, 4u * tile_floats(t + STAGES), &full[stage]);
    }
    if (compact) {
      // Keep the K first; the stream goes on in the background meanwhile. No thread appends until
      // the select's barriers are passed, so count is stable here.
      select_first_k(buf_bits, buf_col, count, K, sel);
      if (tid < K) buf_bits[tid] = sel.sel_bits[tid], buf_col[tid] = sel.sel_col[tid];
      if (tid == 0) count = K, thr = sel.min_key + 1;  // min_key < +inf's key + 1: no wrap
      __syncthreads();
    }
  }

  select_first_k(buf_bits, buf_col, count, K, sel);
  if (tid < K) {
    // Rank sort: the K entries are distinct in (key, column), so ranks are a permutation.
    const unsigned key = order_key(sel.sel_bits[tid]);
    const int col = sel.sel_col[tid];
    int rank = 0;
    for (int j = 0; j < K; ++j) {
      const unsigned kj = order_key(sel.sel_bits[j]);
      rank += kj > key || (kj == key && sel.sel_col[j] < col);
    }
    values[static_cast<size_t>(row) * K + rank] = __uint_as_float(sel.sel_bits[tid]);
    indices[static_cast<size_t>(row) * K + rank] = col;
  }
}
