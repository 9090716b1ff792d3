/* forgek
{
  "name": "attention_decode_warp_page_ring",
  "mechanisms": ["split_k", "tma", "mbarrier_pipeline", "mma_sync", "ldmatrix", "smem_swizzle", "online_softmax"],
  "controls": {"split_k": ["SPLIT"], "block_size": ["WARPS"], "mbarrier_pipeline": ["STAGES"],
               "split_combine": ["COMBINE"]},
  "params": {"SPLIT": [1024, 512, 256, 2048], "WARPS": [4, 2, 8], "STAGES": [3, 2, 4, 6], "COMBINE": [1, 0],
             "HEAD_DIM": 128, "PAGE_ROWS": 16},
  "let": {"splits": "CTX / SPLIT",
          "pages_per_warp": "SPLIT / PAGE_ROWS / WARPS",
          "smem_bytes": "WARPS*STAGES*4*PAGE_ROWS*HEAD_DIM + 16*HEAD_DIM*2 + 1024"},
  "constraints": ["D == HEAD_DIM", "HEAD_DIM % 64 == 0", "PAGE == PAGE_ROWS", "CTX % SPLIT == 0",
                  "SPLIT % (PAGE_ROWS*WARPS) == 0", "pages_per_warp <= 32", "HQ % HKV == 0", "HQ / HKV <= 16",
                  "smem_bytes <= 232448"],
  "workspaces": [
    {"name": "part_o",   "bytes": "4*BATCH*HQ*splits*HEAD_DIM", "zero": false},
    {"name": "part_lse", "bytes": "4*BATCH*HQ*splits",          "zero": false},
    {"name": "done",     "bytes": "(COMBINE == 1) * 4*BATCH*HKV", "zero": true}
  ],
  "tensor_maps": [
    {"name": "tmK", "tensor": "k_cache", "shape": ["BATCH*CTX", "HKV", "D"], "box": ["PAGE_ROWS", 1, 64], "swizzle": "128B"},
    {"name": "tmV", "tensor": "v_cache", "shape": ["BATCH*CTX", "HKV", "D"], "box": ["PAGE_ROWS", 1, 64], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "decode_warp_page_ring",
     "grid": ["splits", "HKV", "BATCH"], "block": ["32*WARPS"], "smem": "smem_bytes",
     "args": ["tmK", "tmV", "q", "page_table", "part_o", "part_lse", "done", "o", "HQ", "HKV", "CTX", "softmax_scale"]},
    {"kernel": "decode_combine_splits", "when": "COMBINE == 0",
     "grid": ["HQ", "BATCH"], "block": ["HEAD_DIM"],
     "args": ["part_o", "part_lse", "o", "HQ", "splits"]}
  ]
}
*/
// Split-KV flash decoding where every warp streams whole pages by TMA through a ring of its own.
//
// One block per (split, kv head, sequence), WARPS warps; the G = HQ/HKV query heads sharing the kv
// head are the 16 rows of an m16 tile (rows >= G are zero queries), so each K/V byte is read once for
// all G heads. A page's slice of one kv head is 16 rows of D bf16, 2 KB apart in the cache
// [NUM_PAGES, PAGE, HKV, D]: one 3-D TMA box [16 rows][1 head][64 d] per 64 columns fetches it (the
// cache viewed as [BATCH*CTX rows, HKV, D]; rows page*16 ..), 128B-swizzled, as the mma.cuh _xor
// helpers read a [16][64] tile.
//   warp w of the block  -> pages w, w + WARPS, w + 2*WARPS, ... of the split (pages_per_warp of them)
//   its ring             -> STAGES slots [K | V][D/64][16][64] bf16 (8 KB at D = 128), full[w][s]:
//                           lane 0 arms the barrier with the slot's bytes and issues its 2*D/64 boxes;
//                           the warp waits, computes, and lane 0 refills the slot with page j + STAGES
//   per page, per warp   -> S[16 heads x 16 tokens] = Q K^T, online softmax (log2 units), O += P V
// No block barrier inside the stream: each warp is an independent flash decoder with STAGES pages in
// flight. At the end the warps' states (O / l, m + log2 l) are merged by fk::lse2_combine into the
// split's state in part_o / part_lse, and the splits of (sequence, kv head) are merged into o either by
// the block that finishes last (COMBINE 1: it counts itself on done[b, kvh]) or by a second launch
// (COMBINE 0).
//   SPLIT:   tokens per block (CTX / SPLIT splits).
//   WARPS:   warps per block, each with its own ring.
//   STAGES:  pages per warp ring (each in flight while the warp computes on another).
//   COMBINE: 1 the last block of a (sequence, kv head) merges the splits; 0 a second kernel does.
#include <cuda_bf16.h>
#include <forgek/mbarrier.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>
#include <forgek/split_kv.cuh>
#include <forgek/tma.cuh>

constexpr int kThreads = 32 * WARPS;
constexpr int kHalves = HEAD_DIM / 64;                  // 64-column boxes per row
constexpr int kBoxElems = PAGE_ROWS * 64;               // one box: [16 rows][64 d]
constexpr int kSlotElems = 2 * kHalves * kBoxElems;     // [K | V][kHalves][16][64]
constexpr unsigned kSlotBytes = kSlotElems * 2;
constexpr int kSteps = 64 / 16;                         // k16 steps of Q K^T within a box
constexpr int kDTiles = HEAD_DIM / 8;                   // n8 tiles of O over d
constexpr int kPagesPerWarp = SPLIT / PAGE_ROWS / WARPS;

// Lane 0 of a warp loads page `page`'s K and V slices of kv head kvh into `slot`, completing on `full`.
__device__ __forceinline__ void fetch_page(__nv_bfloat16* slot, unsigned long long* full, const CUtensorMap* tmK,
                                           const CUtensorMap* tmV, int page, int kvh)
{
  fk::mbar_arrive_expect_tx(full, kSlotBytes);
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    fk::tma_load_3d(slot + h * kBoxElems, tmK, full, h * 64, kvh, page * PAGE_ROWS);
    fk::tma_load_3d(slot + (kHalves + h) * kBoxElems, tmV, full, h * 64, kvh, page * PAGE_ROWS);
  }
}

extern "C" __global__ void __launch_bounds__(kThreads)
decode_warp_page_ring(const __grid_constant__ CUtensorMap tmK,  // k_cache as [BATCH*CTX, HKV, D], box [16][1][64]
                      const __grid_constant__ CUtensorMap tmV,  // v_cache, the same view
                      const __nv_bfloat16* __restrict__ q,      // [BATCH, HQ, D]
                      const int* __restrict__ page_table,       // [BATCH, CTX / PAGE]
                      float* __restrict__ part_o,               // [BATCH, HQ, splits, D]: O / l of each split
                      float* __restrict__ part_lse,             // [BATCH, HQ, splits]: m + log2 l of each split
                      unsigned* __restrict__ done,              // [BATCH, HKV]: splits finished (COMBINE 1), zeroed
                      __nv_bfloat16* __restrict__ o,            // [BATCH, HQ, D]
                      int HQ, int HKV, int CTX, float softmax_scale)
{
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 B: boxes start 1024-aligned.
  __nv_bfloat16* const ring = reinterpret_cast<__nv_bfloat16*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);  // [WARPS][STAGES][kSlotElems]
  __nv_bfloat16* const sQ = ring + WARPS * STAGES * kSlotElems;               // [kHalves][16][64]: rows >= G zero
  __shared__ __align__(8) unsigned long long full[WARPS][STAGES];
  __shared__ float s_lse[WARPS][16];  // each warp's m + log2 l per row
  __shared__ bool s_last;

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int splits = gridDim.x;
  const int G = HQ / HKV;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;

  if (threadIdx.x == 0) {
    fk::prefetch_tensormap(&tmK);
    fk::prefetch_tensormap(&tmV);
    for (int w = 0; w < WARPS; ++w)
      for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[w][s], 1);
    fk::fence_barrier_init();
  }
  // Q rows: head kvh*G + r for r < G, zeros below; chunk ch of row r in box ch / 8, swizzled.
  for (int e = threadIdx.x; e < 16 * (HEAD_DIM / 8); e += kThreads) {
    const int r = e / (HEAD_DIM / 8), ch = e % (HEAD_DIM / 8);
    uint4 val = make_uint4(0u, 0u, 0u, 0u);
    if (r < G) val = fk::ld16(q + ((size_t)b * HQ + kvh * G + r) * HEAD_DIM + ch * 8);
    fk::st16(sQ + (ch / 8) * kBoxElems + r * 64 + fk::swizzle_xor(r, ch % 8) * 8, val);
  }
  __syncthreads();  // barriers initialised, Q tile written

  // This warp's pages: j-th is page (split*SPLIT/PAGE_ROWS + warp + WARPS*j) of the sequence; lane j
  // holds its cache page id, read once here.
  const int* const pages = page_table + (size_t)b * (CTX / PAGE_ROWS) + split * (SPLIT / PAGE_ROWS) + warp;
  const int my_page = lane < kPagesPerWarp ? pages[lane * WARPS] : 0;
  __nv_bfloat16* const my_ring = ring + warp * STAGES * kSlotElems;
  unsigned long long* const my_full = full[warp];

#pragma unroll
  for (int j = 0; j < STAGES && j < kPagesPerWarp; ++j) {
    const int page = __shfl_sync(0xffffffffu, my_page, j);
    if (lane == 0) fetch_page(my_ring + j * kSlotElems, &my_full[j], &tmK, &tmV, page, kvh);
  }

  unsigned qf[kHalves][kSteps][4];  // Q [16 x D] as A fragments, box by box
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) fk::ldmatrix_a_xor<64>(qf[h][ks], sQ + h * kBoxElems, 0, ks);

  float acc_o[kDTiles][4] = {};  // O [16 x D] (C fragments)
  float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows g, g+8
  const float scale_log2 = softmax_scale * 1.4426950408889634f;

  for (int j = 0; j < kPagesPerWarp; ++j) {
    const int s = j % STAGES;
    const __nv_bfloat16* const kt = my_ring + s * kSlotElems;  // [kHalves][16 tokens][64]
    const __nv_bfloat16* const vt = kt + kHalves * kBoxElems;   // [kHalves][16 tokens][64]
    fk::mbar_wait(&my_full[s], (j / STAGES) & 1);

    float acc_s[2][4] = {};  // S [16 heads x 16 tokens]
#pragma unroll
    for (int h = 0; h < kHalves; ++h) fk::warp_mma_a_bt_xor<2, kSteps, 64>(acc_s, qf[h], kt + h * kBoxElems, 0);
    fk::online_softmax_mma_rows<2, kDTiles>(acc_s, acc_o, row_max, row_sum, scale_log2);
    unsigned pf[4];  // P [16 x 16 tokens] as an A fragment
    fk::c_to_a_bf16(pf, acc_s[0], acc_s[1]);
    // O [16 x D] += P V, V [16 tokens][D] read as [k][n] fragments
#pragma unroll
    for (int dp = 0; dp < kDTiles / 2; ++dp) {  // O's columns 16dp .. 16dp+15: box dp/4, its 16-column group dp%4
      unsigned vb[4];
      fk::ldmatrix_b_trans_xor<64>(vb, vt + (dp / 4) * kBoxElems, 0, dp % 4);
      fk::mma_m16n8k16_bf16(acc_o[2 * dp], pf, vb[0], vb[1]);
      fk::mma_m16n8k16_bf16(acc_o[2 * dp + 1], pf, vb[2], vb[3]);
    }

    // Every lane's reads of slot s are done (their results are in registers): refill it.
    __syncwarp();
    const int next = j + STAGES;
    const int page = __shfl_sync(0xffffffffu, my_page, next < kPagesPerWarp ? next : 0);
    if (lane == 0 && next < kPagesPerWarp) fetch_page(my_ring + s * kSlotElems, &my_full[s], &tmK, &tmV, page, kvh);
  }

  // The warps' states as (O / l, m + log2 l) in s_o [WARPS][16][D] fp32 over the ring: every load
  // issued was waited for, so the ring is dead once all warps are here.
  __syncthreads();
  float* const s_o = reinterpret_cast<float*>(ring);
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {  // fragment rows g and g + 8
    const int row = g + 8 * hr;
    const float inv_l = 1.0f / row_sum[hr];
    if (t == 0) s_lse[warp][row] = row_max[hr] + __log2f(row_sum[hr]);
#pragma unroll
    for (int dt = 0; dt < kDTiles; ++dt) {
      float* const dst = s_o + (warp * 16 + row) * HEAD_DIM + dt * 8 + 2 * t;
      dst[0] = acc_o[dt][2 * hr] * inv_l;
      dst[1] = acc_o[dt][2 * hr + 1] * inv_l;
    }
  }
  __syncthreads();

  // One thread per (head row r < G, d): the warps' union is the split's state.
  const size_t head0 = (size_t)b * HQ + kvh * G;  // first query head of this kv head
  for (int e = threadIdx.x; e < G * HEAD_DIM; e += kThreads) {
    const int r = e / HEAD_DIM, d = e % HEAD_DIM;
    const size_t state = (head0 + r) * splits + split;
    part_o[state * HEAD_DIM + d] = fk::lse2_combine(s_o + r * HEAD_DIM + d, 16 * HEAD_DIM, &s_lse[0][r], 16, WARPS);
    if (d == 0) part_lse[state] = fk::lse2_union(&s_lse[0][r], 16, WARPS);
  }
  if (COMBINE == 0) return;

  // The last block of (b, kvh) to finish merges the splits' states of its G heads into o.
  __threadfence();  // this block's partial is visible GPU-wide before the block is counted
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(&done[b * HKV + kvh], 1u) == (unsigned)(splits - 1);
  __syncthreads();
  if (!s_last) return;
  __threadfence();  // the partials of the blocks counted before this one are read after the count
  for (int e = threadIdx.x; e < G * HEAD_DIM; e += kThreads) {
    const int r = e / HEAD_DIM, d = e % HEAD_DIM;
    const size_t state0 = (head0 + r) * splits;
    const float merged =
        fk::lse2_combine<true>(part_o + state0 * HEAD_DIM + d, HEAD_DIM, part_lse + state0, 1, splits);
    o[(head0 + r) * HEAD_DIM + d] = __float2bfloat16(merged);
  }
}

extern "C" __global__ void __launch_bounds__(HEAD_DIM)
decode_combine_splits(const float* __restrict__ part_o,    // [BATCH, HQ, splits, D]
                      const float* __restrict__ part_lse,  // [BATCH, HQ, splits]
                      __nv_bfloat16* __restrict__ o,       // [BATCH, HQ, D]
                      int HQ, int splits)
{
  const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const size_t state0 = ((size_t)b * HQ + h) * splits;
  const float merged = fk::lse2_combine(part_o + state0 * HEAD_DIM + d, HEAD_DIM, part_lse + state0, 1, splits);
  o[((size_t)b * HQ + h) * HEAD_DIM + d] = __float2bfloat16(merged);
}
