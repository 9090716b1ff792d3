/* forgek
{
  "name": "attention_prefill_fa2_mma",
  "mechanisms": ["cp_async", "mma_sync", "ldmatrix", "smem_swizzle", "online_softmax"],
  "controls": {"tile": ["BM"]},
  "params": {"BM": [64, 128], "HEAD_DIM": 128, "MIN_BLOCKS": 1},
  "let": {"threads": "(BM/16)*32",
          "bn": "BM/2",
          "smem_bytes": "(BM + 4*bn)*HEAD_DIM*2"},
  "constraints": ["D == HEAD_DIM", "HEAD_DIM % 16 == 0", "S % BM == 0", "bn % 16 == 0", "(bn*HEAD_DIM/8) % threads == 0",
                  "HQ % HKV == 0", "smem_bytes <= 232448"],
  "launches": [
    {"kernel": "attention_prefill_fa2",
     "grid": ["S / BM", "HQ", "BATCH"], "block": ["threads"], "smem": "smem_bytes",
     "args": ["q", "k", "v", "o", "HQ", "HKV", "S", "softmax_scale"]}
  ]
}
*/
// Seed for attention_prefill_bf16: a FlashAttention-2 style kernel, a starting point that leaves the
// Hopper mechanisms (TMA, wgmma, warp specialisation, intra-warpgroup overlap of softmax and MMA) to
// find. Two tiles of BM queries x BN = BM/2 keys: 64 x 32 (4 warps, the first instance) and 128 x 64
// (8 warps, the operator's expert reference until cuDNN's SDPA took its place; README.md has both
// timed). A causal GQA forward on mma.sync tensor cores.
//
// A block owns BM query rows of one (batch, head); each of its BM/16 warps owns 16 of them, so
// every softmax statistic of a row lives in the 4 lanes of one quad and never crosses warps. Key
// tiles of BN rows stream through shared memory (K and V double-buffered, cp.async), and for each:
//   S = Q K^T                        mma m16n8k16: Q fragments stay in registers for the whole
//                                    block; K [key][d] is d-contiguous = the mma's "col" B layout;
//   causal mask                      only on tiles that cross the diagonal;
//   online softmax                   m_new = max(m, rowmax S); P = exp2(S*c - m_new*c);
//                                    O *= exp2((m - m_new)*c); l = l*that + rowsum P (c folds
//                                    softmax_scale and log2 e into one multiply);
//   O += P V                         P goes from the S accumulators straight into A fragments (the
//                                    m16n8 C layout of two n8 tiles is the m16k16 A layout), V is
//                                    read with ldmatrix.trans.
// At the end O / l is rounded to bf16. Query tiles are taken longest-first (the last tile of the
// sequence has the most keys) so that the tail of the grid is short tiles. Warps whose 16 rows all
// precede a diagonal tile skip its math (they still help load it).
//
// Pipeline per key tile j (groups complete in order, so wait_group 1 means "all but the newest"):
//   wait K_j; barrier; S = Q K_j^T; issue K_{j+1}; softmax; wait V_j; barrier; issue V_{j+1}; O += P V_j.
// The buffer a prefetch overwrites was last read in iteration j-1, before this iteration's barrier.
#include <cuda_bf16.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>

#define WARPS (BM / 16)
#define THREADS (WARPS * 32)
#define CHUNKS (HEAD_DIM / 8)  // 16-byte chunks per row of Q, K, V tiles
#define KSTEPS (HEAD_DIM / 16) // k16 steps over the head dimension
#define DTILES (HEAD_DIM / 8)  // n8 tiles of O per warp
#define BN (BM / 2)             // keys per tile
#define NTILES (BN / 8)        // n8 tiles of S per warp

// Shared tiles are [rows][HEAD_DIM] bf16 with the 16-byte chunks of row r XOR-swizzled by r & 7
// (fk::cp_async_tile_xor writes them so, the fk::ldmatrix_*_xor helpers read them so): the 8 rows
// one ldmatrix reads fall in 8 different 16-byte bank groups.
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_prefill_fa2(const __nv_bfloat16* __restrict__ q,  // [BATCH, HQ, S, D]
                      const __nv_bfloat16* __restrict__ k,  // [BATCH, HKV, S, D]
                      const __nv_bfloat16* __restrict__ v,  // [BATCH, HKV, S, D]
                      __nv_bfloat16* __restrict__ o,        // [BATCH, HQ, S, D]
                      int HQ, int HKV, int S, float softmax_scale)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sQ = reinterpret_cast<__nv_bfloat16*>(smem);  // [BM][D]
  __nv_bfloat16* const sK = sQ + BM * HEAD_DIM;                        // 2 x [BN][D]
  __nv_bfloat16* const sV = sK + 2 * BN * HEAD_DIM;                    // 2 x [BN][D]
  constexpr int kRowBytes = HEAD_DIM * 2;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;  // mma fragment row group and column pair
  const int q_tile = gridDim.x - 1 - blockIdx.x;  // longest tiles first
  const int h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (HQ / HKV);
  const int q0 = q_tile * BM;

  const __nv_bfloat16* const qh = q + (((size_t)b * HQ + h) * S + q0) * HEAD_DIM;  // this block's [BM][D]
  const __nv_bfloat16* const kh = k + ((size_t)b * HKV + kvh) * S * HEAD_DIM;     // [S][D]
  const __nv_bfloat16* const vh = v + ((size_t)b * HKV + kvh) * S * HEAD_DIM;
  __nv_bfloat16* const oh = o + (((size_t)b * HQ + h) * S + q0) * HEAD_DIM;

  const int n_tiles = (q0 + BM - 1) / BN + 1;  // key tiles 0 .. holding the block's last query
  const float c = softmax_scale * 1.4426950408889634f;  // scores to log2 units

  // Prologue: Q and K_0 in one group, V_0 in the next.
  fk::cp_async_tile_xor<BM, CHUNKS, THREADS>(sQ, qh, kRowBytes);
  fk::cp_async_tile_xor<BN, CHUNKS, THREADS>(sK, kh, kRowBytes);
  fk::cp_async_commit();
  fk::cp_async_tile_xor<BN, CHUNKS, THREADS>(sV, vh, kRowBytes);
  fk::cp_async_commit();

  unsigned qf[KSTEPS][4];          // this warp's 16 query rows as A fragments, all of D
  float acc_o[DTILES][4] = {};     // O[16][D]: rows g and g+8, columns 8*j + 2t, +1
  float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows g, g+8 (log2 units)
  const int row_lo = q0 + warp * 16 + g;  // query index of fragment row g (row g+8 is +8)

  for (int j = 0; j < n_tiles; ++j) {
    const int buf = j & 1, k0 = j * BN;
    const __nv_bfloat16* const kt = sK + buf * BN * HEAD_DIM;
    const __nv_bfloat16* const vt = sV + buf * BN * HEAD_DIM;

    fk::cp_async_wait<1>();  // K_j (and Q) landed; V_j may still be in flight
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int ks = 0; ks < KSTEPS; ++ks) fk::ldmatrix_a_xor<HEAD_DIM>(qf[ks], sQ, warp * 16, ks);
    }
    // Warp-uniform: this warp's rows q0+16w .. +15 see some key of the tile.
    const bool active = k0 <= q0 + warp * 16 + 15;

    // S = Q K_j^T (16 x BN per warp)
    float acc_s[NTILES][4];
#pragma unroll
    for (int nt = 0; nt < NTILES; ++nt) acc_s[nt][0] = acc_s[nt][1] = acc_s[nt][2] = acc_s[nt][3] = 0.0f;
    if (active) fk::warp_mma_a_bt_xor<NTILES, KSTEPS, HEAD_DIM>(acc_s, qf, kt, 0);

    // Prefetch K_{j+1} into the other buffer (last read in iteration j-1).
    if (j + 1 < n_tiles)
      fk::cp_async_tile_xor<BN, CHUNKS, THREADS>(sK + (buf ^ 1) * BN * HEAD_DIM, kh + (size_t)(k0 + BN) * HEAD_DIM,
                                                 kRowBytes);
    fk::cp_async_commit();

    unsigned pf[BN / 16][4];  // P as A fragments for O += P V
    if (active) {
      // Causal mask, only where the tile crosses this warp's diagonal.
      if (k0 + BN - 1 > q0 + warp * 16) {
#pragma unroll
        for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = k0 + nt * 8 + 2 * t + (e & 1), row = row_lo + 8 * (e / 2);
            if (key > row) acc_s[nt][e] = fk::neg_inf();
          }
      }
      // Online softmax for rows g and g+8 (key 0 is in tile 0 for every row, so the max is finite).
      fk::online_softmax_mma_rows<NTILES, DTILES>(acc_s, acc_o, row_max, row_sum, c);
      // C fragments of n8 tiles 2kk, 2kk+1 = A fragment of k16 step kk.
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) fk::c_to_a_bf16(pf[kk], acc_s[2 * kk], acc_s[2 * kk + 1]);
    }

    fk::cp_async_wait<1>();  // V_j landed; K_{j+1} may still be in flight
    __syncthreads();
    // Prefetch V_{j+1} into the other buffer (last read in iteration j-1, before the barrier above).
    if (j + 1 < n_tiles)
      fk::cp_async_tile_xor<BN, CHUNKS, THREADS>(sV + (buf ^ 1) * BN * HEAD_DIM, vh + (size_t)(k0 + BN) * HEAD_DIM,
                                                 kRowBytes);
    fk::cp_async_commit();

    // O += P V_j: V [key][d] row-major is k x n with n contiguous, read transposed.
    if (active) fk::warp_mma_a_b_xor<BN / 16, DTILES, HEAD_DIM>(acc_o, pf, vt, 0);
  }
  fk::cp_async_wait<0>();  // only empty groups can remain; nothing may be in flight at exit

  // O / l, rounded to bf16: fragment row g (and g+8), columns 8*dt + 2t, +1.
  const float inv0 = 1.0f / row_sum[0], inv1 = 1.0f / row_sum[1];
  const int r0 = warp * 16 + g;
#pragma unroll
  for (int dt = 0; dt < DTILES; ++dt) {
    const int col = dt * 8 + 2 * t;
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)r0 * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][0] * inv0, acc_o[dt][1] * inv0);
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)(r0 + 8) * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][2] * inv1, acc_o[dt][3] * inv1);
  }
}
