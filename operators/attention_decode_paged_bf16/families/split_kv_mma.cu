/* forgek
{
  "name": "attention_decode_split_kv_mma",
  "mechanisms": ["split_k", "cp_async", "mma_sync", "ldmatrix", "smem_swizzle", "online_softmax"],
  "controls": {"split_k": ["SPLIT"], "block_size": ["WARPS"], "cp_async": ["STAGES"]},
  "params": {"SPLIT": [1024, 512, 256, 2048, 4096], "WARPS": [4, 2, 8], "STAGES": [3, 2, 4], "HEAD_DIM": 128},
  "let": {"splits": "CTX / SPLIT",
          "tile": "16*WARPS",
          "smem_bytes": "STAGES*2*tile*HEAD_DIM*2 + 16*HEAD_DIM*2"},
  "constraints": ["D == HEAD_DIM", "HEAD_DIM % 64 == 0", "CTX % SPLIT == 0", "SPLIT % tile == 0",
                  "HQ % HKV == 0", "HQ / HKV <= 16", "smem_bytes <= 232448"],
  "workspaces": [
    {"name": "part_o",   "bytes": "4*BATCH*HQ*splits*HEAD_DIM", "zero": false},
    {"name": "part_lse", "bytes": "4*BATCH*HQ*splits",          "zero": false}
  ],
  "launches": [
    {"kernel": "decode_split_mma",
     "grid": ["splits", "HKV", "BATCH"], "block": ["32*WARPS"], "smem": "smem_bytes",
     "args": ["q", "k_cache", "v_cache", "page_table", "part_o", "part_lse", "HQ", "HKV", "CTX", "PAGE", "softmax_scale"]},
    {"kernel": "decode_combine_splits",
     "grid": ["HQ", "BATCH"], "block": ["HEAD_DIM"],
     "args": ["part_o", "part_lse", "o", "HQ", "splits"]}
  ]
}
*/
// Split-KV flash decoding on mma.sync, the reference's design with its knobs as params.
//
// Kernel 1, one block per (split, kv head, sequence), WARPS warps. The G = HQ/HKV query heads sharing
// the kv head are the 16 rows of an m16 tile (rows >= G are zero queries, dropped at the end), so every
// K/V byte gathered from the cache serves all G heads. The block walks its SPLIT tokens in tiles of
// 16*WARPS tokens, gathered through the page table by cp.async into a ring of STAGES tiles (STAGES - 1
// tiles in flight while one is computed); warp w takes tokens [16w, 16w + 16) of each tile:
//   S[16 heads x 16 tokens] = Q K^T,  online softmax per head (log2 units),  O[16 x D] += P V.
// At the end each warp's state is written as (O / l, m + log2 l) and fk::lse2_combine merges the warps
// into the split's state, stored in part_o / part_lse.
// Kernel 2, one block per (head, sequence), one thread per d: the same combine over the splits, rounded
// to bf16.
//   SPLIT:  tokens per block; CTX / SPLIT splits give BATCH*HKV*splits blocks to cover the SMs.
//   WARPS:  warps per block: the tile is 16 tokens per warp.
//   STAGES: tiles in the cp.async ring (2: double buffering).
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>
#include <forgek/split_kv.cuh>

constexpr int kThreads = 32 * WARPS;
constexpr int kTile = 16 * WARPS;          // tokens per ring slot
constexpr int kChunks = HEAD_DIM / 8;      // 16-byte chunks per K/V row
constexpr int kSteps = HEAD_DIM / 16;      // k16 steps of Q K^T over d
constexpr int kDTiles = HEAD_DIM / 8;      // n8 tiles of O over d
constexpr int kTileElems = kTile * HEAD_DIM;

extern "C" __global__ void __launch_bounds__(kThreads)
decode_split_mma(const __nv_bfloat16* __restrict__ q,        // [BATCH, HQ, D]
                 const __nv_bfloat16* __restrict__ k_cache,  // [NUM_PAGES, PAGE, HKV, D]
                 const __nv_bfloat16* __restrict__ v_cache,  // [NUM_PAGES, PAGE, HKV, D]
                 const int* __restrict__ page_table,         // [BATCH, CTX / PAGE]
                 float* __restrict__ part_o,                 // [BATCH, HQ, splits, D]: O / l of each split
                 float* __restrict__ part_lse,               // [BATCH, HQ, splits]: m + log2 l of each split
                 int HQ, int HKV, int CTX, int PAGE, float softmax_scale)
{
  // Shared tiles are [rows][HEAD_DIM] bf16, chunk c of row r at c ^ (r & 7) (the mma.cuh _xor layout).
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sK = reinterpret_cast<__nv_bfloat16*>(smem);  // [STAGES][kTile][D]
  __nv_bfloat16* const sV = sK + STAGES * kTileElems;                 // [STAGES][kTile][D]
  __nv_bfloat16* const sQ = sV + STAGES * kTileElems;                 // [16][D]: rows >= G zero
  __shared__ float s_lse[WARPS][16];                                  // each warp's m + log2 l per row

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int splits = gridDim.x;
  const int G = HQ / HKV;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int tok0 = split * SPLIT;
  const int* const pages = page_table + (size_t)b * (CTX / PAGE);

  // Tokens [first, first + kTile) of this sequence into ring slot `slot`: row r of K and V is token
  // first + r of kv head kvh, found through its page. Issues the copies; the caller commits.
  auto gather_tile = [&](int first, int slot) {
#pragma unroll
    for (int i = 0; i < kTile * kChunks / kThreads; ++i) {
      const int e = threadIdx.x + i * kThreads, r = e / kChunks, ch = e % kChunks;
      const size_t src = fk::paged_row(pages, first + r, PAGE, HKV, kvh, HEAD_DIM) + ch * 8;
      const int dst = slot * kTileElems + r * HEAD_DIM + fk::swizzle_xor(r, ch) * 8;
      fk::cp_async_cg_16(sK + dst, k_cache + src);
      fk::cp_async_cg_16(sV + dst, v_cache + src);
    }
  };

  const int tiles = SPLIT / kTile;
  // Prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty groups past the end keep
  // the group count, and so cp_async_wait's meaning, the same on every iteration).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) gather_tile(tok0 + s * kTile, s);
    fk::cp_async_commit();
  }
  // Q rows: head kvh*G + r for r < G, zeros below (plain stores, published by the loop's first barrier).
  for (int e = threadIdx.x; e < 16 * kChunks; e += kThreads) {
    const int r = e / kChunks, ch = e % kChunks;
    uint4 val = make_uint4(0u, 0u, 0u, 0u);
    if (r < G) val = fk::ld16(q + ((size_t)b * HQ + kvh * G + r) * HEAD_DIM + ch * 8);
    fk::st16(sQ + r * HEAD_DIM + fk::swizzle_xor(r, ch) * 8, val);
  }

  unsigned qf[kSteps][4];                 // Q [16 x D] as A fragments
  float acc_o[kDTiles][4] = {};           // O [16 x D] of this warp's tokens (C fragments)
  float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows g, g+8
  const float scale_log2 = softmax_scale * 1.4426950408889634f;

  for (int i = 0; i < tiles; ++i) {
    fk::cp_async_wait<STAGES - 2>();  // this thread's copies of tile i landed ...
    __syncthreads();                  // ... and everyone's; the slot of tile i-1 is no longer read
    const int next = i + STAGES - 1;  // refills the slot tile i-1 used
    if (next < tiles) gather_tile(tok0 + next * kTile, next % STAGES);
    fk::cp_async_commit();
    if (i == 0) {
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) fk::ldmatrix_a_xor<HEAD_DIM>(qf[ks], sQ, 0, ks);
    }
    const __nv_bfloat16* const kt = sK + (i % STAGES) * kTileElems;  // [kTile][D]
    const __nv_bfloat16* const vt = sV + (i % STAGES) * kTileElems;  // [kTile][D]

    float acc_s[2][4] = {};  // S [16 heads x 16 tokens]: two n8 tiles of this warp's tokens
    fk::warp_mma_a_bt_xor<2, kSteps, HEAD_DIM>(acc_s, qf, kt, warp * 16);
    fk::online_softmax_mma_rows<2, kDTiles>(acc_s, acc_o, row_max, row_sum, scale_log2);
    unsigned pf[1][4];  // P [16 x 16 tokens] as an A fragment
    fk::c_to_a_bf16(pf[0], acc_s[0], acc_s[1]);
    fk::warp_mma_a_b_xor<1, kDTiles, HEAD_DIM>(acc_o, pf, vt, warp * 16);
  }

  // Each warp's state as (O / l, m + log2 l) in s_o [WARPS][16][D] fp32, over the dead ring (every
  // copy that carried data was waited for; the groups still open are empty).
  __syncthreads();
  float* const s_o = reinterpret_cast<float*>(smem);
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
  for (int e = threadIdx.x; e < G * HEAD_DIM; e += kThreads) {
    const int r = e / HEAD_DIM, d = e % HEAD_DIM;
    const size_t state = ((size_t)b * HQ + kvh * G + r) * splits + split;
    part_o[state * HEAD_DIM + d] = fk::lse2_combine(s_o + r * HEAD_DIM + d, 16 * HEAD_DIM, &s_lse[0][r], 16, WARPS);
    if (d == 0) part_lse[state] = fk::lse2_union(&s_lse[0][r], 16, WARPS);
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
