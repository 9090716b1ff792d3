/* forgek
{
  "name": "attention_prefill_gqa_shared_kv_mma",
  "mechanisms": ["cp_async", "mma_sync", "ldmatrix", "smem_swizzle", "online_softmax"],
  "controls": {"tile": ["BMH"], "key_tile": ["BN"]},
  "params": {"BMH": [16, 32], "BN": [32, 64], "GQA": 4, "HEAD_DIM": 128},
  "let": {"threads": "GQA*BMH/16*32",
          "smem_bytes": "(GQA*BMH + 4*BN)*HEAD_DIM*2"},
  "constraints": ["D == HEAD_DIM", "HQ == GQA*HKV", "S % BMH == 0", "S % BN == 0",
                  "(BMH*HEAD_DIM/8) % threads == 0", "(BN*HEAD_DIM/8) % threads == 0", "smem_bytes <= 232448"],
  "launches": [
    {"kernel": "attention_prefill_gqa_shared_kv",
     "grid": ["HKV", "BATCH", "S / BMH"], "block": ["threads"], "smem": "smem_bytes",
     "args": ["q", "k", "v", "o", "HQ", "HKV", "S", "softmax_scale"]}
  ]
}
*/
// Causal GQA prefill attention where one block serves all GQA query heads of a KV head, so each K / V tile is
// brought into shared memory once for the GQA heads that read it (mma.sync tensor cores, cp.async).
//
// A block owns query rows [q0, q0 + BMH) of the GQA = HQ / HKV heads sharing KV head kvh: GQA x BMH rows, one
// warp per 16 of them (warp w: head kvh*GQA + w / (BMH/16), rows q0 + 16 (w % (BMH/16)) ..). Key tiles of BN
// rows stream through two shared buffers each for K and V (cp.async groups); per tile every warp computes
//   S = Q K^T      mma m16n8k16, Q fragments held in registers for the whole block, K [key][d] as "col" B;
//   causal mask    only where the tile crosses the warp's diagonal; warps wholly before it skip the math;
//   online softmax fk::online_softmax_mma_rows on the m16n8 fragments;
//   O += P V       P from the S accumulators as A fragments (fk::c_to_a_bf16), V read by ldmatrix.trans.
// Against the per-head design (seed.cu), shared-memory fills and their barriers are paid once per GQA heads;
// the price is a block whose queries span only BMH positions, so its causal diagonal tile is shared by more
// warps in proportion.
//
// Params, one idea each:
//   BMH  query positions per head and block (16 or 32: 4 or 8 warps for GQA = 4);
//   BN   keys per cp.async tile (32 or 64): fewer barriers per key against more shared memory per stage.
// Query tiles run longest first: the grid's slowest dimension is the tile, counted down.
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>

constexpr int kWarpsPerHead = BMH / 16;
constexpr int kWarps = GQA * kWarpsPerHead;
constexpr int kThreads = kWarps * 32;
constexpr int kChunks = HEAD_DIM / 8;   // 16-byte chunks per row of Q, K, V
constexpr int kKSteps = HEAD_DIM / 16;  // k16 steps over d in Q K^T
constexpr int kSTiles = BN / 8;         // n8 tiles of S per warp: S is [16][BN]
constexpr int kOTiles = HEAD_DIM / 8;   // n8 tiles of O per warp: O is [16][d]

// Shared tiles are [rows][d] bf16 with the 16-byte chunks of row r XOR-swizzled by r & 7 (cp_async_tile_xor
// writes them so, the ldmatrix *_xor helpers read them so).
extern "C" __global__ void __launch_bounds__(kThreads, 1)
attention_prefill_gqa_shared_kv(const __nv_bfloat16* __restrict__ q,  // [BATCH, HQ, S, D]
                                const __nv_bfloat16* __restrict__ k,  // [BATCH, HKV, S, D]
                                const __nv_bfloat16* __restrict__ v,  // [BATCH, HKV, S, D]
                                __nv_bfloat16* __restrict__ o,        // [BATCH, HQ, S, D]
                                int HQ, int HKV, int S, float softmax_scale)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sQ = reinterpret_cast<__nv_bfloat16*>(smem);  // [GQA][BMH][d]
  __nv_bfloat16* const sK = sQ + GQA * BMH * HEAD_DIM;                 // 2 x [BN][d]
  __nv_bfloat16* const sV = sK + 2 * BN * HEAD_DIM;                    // 2 x [BN][d]
  constexpr int kRowBytes = HEAD_DIM * 2;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;  // mma fragment row group and column pair
  const int kvh = blockIdx.x, b = blockIdx.y;
  const int q0 = (gridDim.z - 1 - blockIdx.z) * BMH;  // longest tiles first
  const int head = kvh * GQA + warp / kWarpsPerHead;  // this warp's query head
  const int warp_row0 = q0 + (warp % kWarpsPerHead) * 16;  // query index of the warp's first row

  const __nv_bfloat16* const kh = k + ((size_t)b * HKV + kvh) * S * HEAD_DIM;  // [S][d]
  const __nv_bfloat16* const vh = v + ((size_t)b * HKV + kvh) * S * HEAD_DIM;
  const int n_tiles = (q0 + BMH - 1) / BN + 1;  // key tiles 0 .. the one holding the block's last query
  const float c = softmax_scale * 1.4426950408889634f;  // scores to log2 units

  // Prologue: the GQA heads' Q and K_0 in one group, V_0 in the next.
  for (int hh = 0; hh < GQA; ++hh)
    fk::cp_async_tile_xor<BMH, kChunks, kThreads>(sQ + hh * BMH * HEAD_DIM,
                                                  q + (((size_t)b * HQ + kvh * GQA + hh) * S + q0) * HEAD_DIM, kRowBytes);
  fk::cp_async_tile_xor<BN, kChunks, kThreads>(sK, kh, kRowBytes);
  fk::cp_async_commit();
  fk::cp_async_tile_xor<BN, kChunks, kThreads>(sV, vh, kRowBytes);
  fk::cp_async_commit();

  unsigned qf[kKSteps][4];          // the warp's 16 query rows as A fragments, all of d
  float acc_o[kOTiles][4] = {};     // O [16][d]: rows g and g+8, columns 8*j + 2t, +1
  float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows g, g+8 (log2 units)

  for (int j = 0; j < n_tiles; ++j) {
    const int buf = j & 1, k0 = j * BN;
    const __nv_bfloat16* const kt = sK + buf * BN * HEAD_DIM;  // [BN][d]
    const __nv_bfloat16* const vt = sV + buf * BN * HEAD_DIM;  // [BN][d]

    fk::cp_async_wait<1>();  // K_j (and Q) landed; V_j may still be in flight
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) fk::ldmatrix_a_xor<HEAD_DIM>(qf[ks], sQ, warp * 16, ks);
    }
    const bool active = k0 <= warp_row0 + 15;  // warp-uniform: some row of the warp sees a key of the tile

    float acc_s[kSTiles][4];  // S [16][BN]
#pragma unroll
    for (int nt = 0; nt < kSTiles; ++nt) acc_s[nt][0] = acc_s[nt][1] = acc_s[nt][2] = acc_s[nt][3] = 0.0f;
    if (active) fk::warp_mma_a_bt_xor<kSTiles, kKSteps, HEAD_DIM>(acc_s, qf, kt, 0);

    // K_{j+1} into the other buffer, last read in iteration j-1 (before this iteration's barrier).
    if (j + 1 < n_tiles)
      fk::cp_async_tile_xor<BN, kChunks, kThreads>(sK + (buf ^ 1) * BN * HEAD_DIM, kh + (size_t)(k0 + BN) * HEAD_DIM,
                                                   kRowBytes);
    fk::cp_async_commit();

    unsigned pf[BN / 16][4];  // P as A fragments of O += P V
    if (active) {
      if (k0 + BN - 1 > warp_row0) {  // the tile crosses this warp's diagonal
#pragma unroll
        for (int nt = 0; nt < kSTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (k0 + nt * 8 + 2 * t + (e & 1) > warp_row0 + g + 8 * (e / 2)) acc_s[nt][e] = fk::neg_inf();
      }
      // Key 0 is in tile 0 for every row, so each row's max is finite from the first step on.
      fk::online_softmax_mma_rows<kSTiles, kOTiles>(acc_s, acc_o, row_max, row_sum, c);
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) fk::c_to_a_bf16(pf[kk], acc_s[2 * kk], acc_s[2 * kk + 1]);
    }

    fk::cp_async_wait<1>();  // V_j landed; K_{j+1} may still be in flight
    __syncthreads();
    if (j + 1 < n_tiles)
      fk::cp_async_tile_xor<BN, kChunks, kThreads>(sV + (buf ^ 1) * BN * HEAD_DIM, vh + (size_t)(k0 + BN) * HEAD_DIM,
                                                   kRowBytes);
    fk::cp_async_commit();

    if (active) fk::warp_mma_a_b_xor<BN / 16, kOTiles, HEAD_DIM>(acc_o, pf, vt, 0);  // V [key][d] read transposed
  }
  fk::cp_async_wait<0>();  // only empty groups remain; nothing may be in flight at exit

  // O / l in bf16: fragment rows g and g+8, columns 8*dt + 2t, +1.
  __nv_bfloat16* const oh = o + (((size_t)b * HQ + head) * S + warp_row0) * HEAD_DIM;
  const float inv0 = 1.0f / row_sum[0], inv1 = 1.0f / row_sum[1];
#pragma unroll
  for (int dt = 0; dt < kOTiles; ++dt) {
    const int col = dt * 8 + 2 * t;
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)g * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][0] * inv0, acc_o[dt][1] * inv0);
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)(g + 8) * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][2] * inv1, acc_o[dt][3] * inv1);
  }
}
