/* forgek
{
  "name": "attention_prefill_fa3_wgmma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "wgmma", "warp_specialization", "mbarrier_pipeline", "setmaxnreg", "online_softmax",
                 "tma_multicast", "thread_block_cluster", "persistent_grid", "tma_store"],
  "controls": {"tile": ["BN"], "mbarrier_pipeline": ["STAGES"], "softmax_overlap": ["OVERLAP"],
               "pingpong": ["PINGPONG"], "tma_multicast": ["CLUSTER"], "persistent_grid": ["PERSISTENT"],
               "exp2_form": ["EXP2"], "tma_store": ["EPI"], "staging_writes": ["STSM"], "raster": ["KV_MAJOR"]},
  "params": {"BN": [64, 128], "STAGES": [2, 3], "OVERLAP": [0, 1], "PINGPONG": [0, 1], "CLUSTER": [1, 2, 4],
             "PERSISTENT": [0, 1], "EXP2": [0, 1], "EPI": [0, 1, 2], "STSM": [0, 1], "KV_MAJOR": [0, 1],
             "HEAD_DIM": 128},
  "let": {"bm": "128",
          "tiles": "BATCH*HQ*(S/bm)",
          "staging": "2*EPI*8192",
          "smem_bytes": "bm*HEAD_DIM*2 + 2*STAGES*BN*HEAD_DIM*2 + staging + 1024 + 8*(4 + 4*STAGES) + 8"},
  "constraints": ["D == HEAD_DIM", "S % bm == 0", "HQ % HKV == 0", "(HQ / HKV) % CLUSTER == 0",
                  "PERSISTENT == 0 || CLUSTER == 1", "EPI > 0 || STSM == 0", "smem_bytes <= 232448"],
  "workspaces": [{"name": "tile_counter", "bytes": "4*PERSISTENT", "zero": true}],
  "tensor_maps": [
    {"name": "tmQ", "tensor": "q", "shape": ["BATCH*HQ*S", "D"], "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmK", "tensor": "k", "shape": ["BATCH*HKV*S", "D"], "box": ["BN", "64"], "swizzle": "128B"},
    {"name": "tmV", "tensor": "v", "shape": ["BATCH*HKV*S", "D"], "box": ["BN", "64"], "swizzle": "128B"},
    {"name": "tmO", "tensor": "o", "shape": ["BATCH*HQ*S", "D"], "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "attention_prefill_fa3", "when": "PERSISTENT == 0",
     "grid": ["HQ", "BATCH", "S / bm"], "block": [384], "cluster": ["CLUSTER", 1, 1], "smem": "smem_bytes",
     "args": ["tmQ", "tmK", "tmV", "tmO", "o", "tile_counter", "BATCH", "HQ", "HKV", "S", "softmax_scale"]},
    {"kernel": "attention_prefill_fa3", "when": "PERSISTENT == 1",
     "grid": ["min(num_sms, tiles)"], "block": [384], "smem": "smem_bytes",
     "args": ["tmQ", "tmK", "tmV", "tmO", "o", "tile_counter", "BATCH", "HQ", "HKV", "S", "softmax_scale"]}
  ]
}
*/
// Causal GQA prefill attention in the FlashAttention-3 design: TMA, wgmma, a producer warpgroup, online softmax.
//
// A work tile is 128 query rows of one (batch, head): warpgroup 0 is the producer (one thread issues TMA),
// warpgroups 1 and 2 are consumers of 64 rows each. Each consumer's Q is loaded once per tile; K and V tiles of
// BN keys stream through a ring of STAGES slots guarded by full / empty mbarriers (K and V have their own, so
// S = Q K^T can start before V lands). Per key tile, a consumer warpgroup computes
//   S = Q K^T          wgmma m64nBNk16 x 8, Q [64][d] and K [keys][d] both K-major in shared memory;
//   causal mask        only on the tile that crosses the warpgroup's diagonal (later tiles are never loaded);
//   online softmax     on the S accumulators in registers (fk::online_softmax_mma_rows: the wgmma accumulator
//                      layout is the mma m16n8 layout, n8 group by n8 group);
//   O += P V           P rounded to bf16 in registers (fk::c_to_a_bf16) is the register A operand of
//                      wgmma m64n128k16 x BN/16; V [keys][d] is read N-major (transposed B); at BN 128 the
//                      first consumer's diagonal tile takes half of them (its last 64 keys lie past its rows).
// Work tiles run longest first (KV_MAJOR 0, tile L: query tile count-1 - L / (BATCH*HQ), then head, then batch;
// KV_MAJOR 1: the same within each KV head's query heads, KV head by KV head), so the heads of one KV head sit
// next to each other and their K / V tiles are read from L2 by up to 4 blocks at once.
// The producer hands each consumer its work tile with its Q (an int in shared memory, published by the Q
// barrier's arrival); tile -1 ends the block. A consumer frees its Q once its last S wgmma retired, so the next
// tile's Q and first K / V land while it finishes P V and stores O.
//
// Params, one idea each:
//   BN         keys per tile (64 or 128): wider S wgmmas and fewer softmax rounds, against registers and smem;
//   STAGES     depth of the K / V ring;
//   OVERLAP    1: issue S_j = Q K_j^T and O += P_{j-1} V_{j-1} together, and do softmax(S_j) while the P V wgmma
//              runs (FA3's intra-warpgroup overlap); O is rescaled once that wgmma retires;
//   PINGPONG   1: the two consumers take turns issuing their wgmmas (named barriers 1 and 2), so one's softmax
//              runs while the other's matrix products hold the tensor cores;
//   CLUSTER    blocks of CLUSTER query heads that share a KV head (adjacent in x) form a cluster: each K / V tile
//              is four TMA boxes (K and V, two 64-column panels each), box i is loaded by cluster block
//              i % CLUSTER and multicast to all, so L2 serves each tile once per cluster instead of per block;
//   PERSISTENT 0: a block per work tile, placed by the hardware; 1: min(num_sms, tiles) blocks that take work
//              tiles from a counter in global memory (blockIdx.x first, then gridDim.x + atomicAdd), so one
//              tile's prologue (Q, the first K / V) overlaps the previous tile's last P V and its stores;
//   EXP2       0: softmax weights by exp2f; 1: by ex2.approx.ftz with the scale folded into one FFMA;
//   EPI        how O leaves: 0 bf16 pairs stored straight from the accumulators; n: fk::WgmmaTmaStore, n
//              64x64 panels a round staged 128B-swizzled in shared memory and written by TMA stores that stay
//              in flight while the consumer starts its next work tile;
//   STSM       (EPI > 0) the staging written by stmatrix, four 8x8 matrices a warp instruction (1), or by 4-byte
//              stores (0);
//   KV_MAJOR   the order of work tiles: 0 query tile by query tile (longest first) over every (batch, head), so the
//              blocks at work at once read all KV heads; 1 KV head by KV head, within one its query heads' tiles
//              longest first, so they read one or two KV heads' K / V and L2 holds them.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>
#include <forgek/wgmma_pipeline.cuh>

constexpr int kRows = 64;                       // query rows per consumer warpgroup
constexpr int kTileRows = 2 * kRows;            // query rows per work tile
constexpr int kPanel = 64;                      // d columns per 128-byte swizzle row
constexpr int kPanels = HEAD_DIM / kPanel;      // 2 panels of d
constexpr int kQBytes = kRows * HEAD_DIM * 2;   // one consumer's Q: [kPanels][64 rows][64 d], 16 KiB
constexpr int kKvBytes = BN * HEAD_DIM * 2;     // one K or V tile: [kPanels][BN keys][64 d]
constexpr int kKvPanelBytes = BN * 128;         // [BN keys][64 d]
constexpr int kSGroups = BN / 8;                // n8 groups of S per thread: S is float[kSGroups][4]
constexpr int kOGroups = HEAD_DIM / 8;          // n8 groups of O per thread: O is float[kOGroups][4]
constexpr int kPSteps = BN / 16;                // k16 steps of P V
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128*40 + 256*232 <= 65536 (24 spills the loader)

// A consumer's O as fk::WgmmaTmaStore sees a GEMM consumer's part of a tile: one m64 slice of HEAD_DIM
// columns, rows [64c, 64c + 64) of the work tile; the staging follows the barriers.
struct OTile {
  static constexpr int kCols = HEAD_DIM, kRow0 = kRows, kCol0 = 0, kMi = 1;
  using Acc = float[1][HEAD_DIM / 2];
  unsigned char* staging;  // 1024-aligned, 2 consumers x EPI panels of [64][64] bf16
  __device__ __forceinline__ unsigned char* after_ring() const { return staging; }
};
using OStore = fk::WgmmaTmaStore<OTile, (EPI > 0 ? EPI : 1), STSM != 0>;  // used when EPI > 0

struct Ring {
  unsigned long long* q_full;   // [2] consumer c's Q landed (or its end-of-work tile was posted)
  unsigned long long* q_empty;  // [2] consumer c's last S wgmma of its tile retired
  unsigned long long* k_full;   // [STAGES] K tile landed
  unsigned long long* v_full;   // [STAGES] V tile landed
  unsigned long long* k_empty;  // [STAGES] both consumers of every cluster block done reading K
  unsigned long long* v_empty;  // [STAGES] both consumers of every cluster block done reading V
  int* tile_of;                 // [2] the work tile posted with consumer c's Q; -1: no more work
};

// Where work tile L sits: its first row of q / o as [BATCH*HQ*S][D], its KV head's first row of k / v as
// [BATCH*HKV*S][D], its first query position and its key-tile count (0 .. the tile holding its last query).
struct WorkTile {
  int q_row, kv_row, q0, n_tiles;
};
__device__ __forceinline__ WorkTile work_tile(int L, int batch, int hq, int hkv, int s)
{
  const int q_tiles = s / kTileRows, group = hq / hkv;  // query heads per KV head
  int q_tile, h, b;
  if (KV_MAJOR) {
    const int kv = L / (q_tiles * group), r = L % (q_tiles * group);  // kv: b * hkv + KV head
    q_tile = q_tiles - 1 - r / group;  // longest first
    h = (kv % hkv) * group + r % group, b = kv / hkv;
  } else {
    const int heads = batch * hq;
    q_tile = q_tiles - 1 - L / heads;  // longest first
    h = L % hq, b = (L % heads) / hq;
  }
  const int q0 = q_tile * kTileRows;
  return {(b * hq + h) * s + q0, (b * hkv + h / group) * s, q0, (q0 + kTileRows) / BN};
}

// One arrive per consumer warpgroup, after its wgmmas that read the slot have retired. With a cluster, every
// block's producer multicasts into this block's slot, so each block's empty barrier hears from us.
__device__ __forceinline__ void release(unsigned long long* bar)
{
  if (threadIdx.x % 128 != 0) return;
  if (CLUSTER == 1) fk::mbar_arrive(bar);
  else
    for (unsigned cta = 0; cta < CLUSTER; ++cta) fk::mbar_arrive_cluster(bar, cta);
}

// Box `box` (0..3: K panel 0, 1, V panel 0, 1) of a tile into the same offset of every cluster block, or of this
// block alone; the cluster block box % CLUSTER issues it.
__device__ __forceinline__ void load_box(int box, void* dst, const CUtensorMap* map, unsigned long long* bar, int c0,
                                         int c1, unsigned rank)
{
  if (CLUSTER == 1) fk::tma_load_2d(dst, map, bar, c0, c1);
  else if (box % CLUSTER == (int)rank)
    fk::tma_load_2d_multicast(dst, map, bar, c0, c1, (unsigned short)((1u << CLUSTER) - 1));
}

// Ping-pong turns: consumer c issues its wgmmas between turn_begin and turn_end. Consumer 1 opens the first
// turn for consumer 0; consumer 0 takes consumer 1's last hand-over when the work runs out (turns_done), so each
// named barrier sees as many arrivals as syncs.
__device__ __forceinline__ void turn_begin(int c)
{
  if (PINGPONG) fk::named_barrier_sync(1 + c, 256);
}
__device__ __forceinline__ void turn_end(int c)
{
  if (PINGPONG) fk::named_barrier_arrive(2 - c, 256);
}
__device__ __forceinline__ void turns_done(int c)
{
  if (PINGPONG && c == 0) fk::named_barrier_sync(1, 256);
}

// S[64][BN] = Q[64][d] K[BN][d]^T: eight k16 steps over d; both operands K-major, 128B swizzle.
__device__ __forceinline__ void issue_qk(float (&s)[kSGroups][4], const unsigned char* sq, const unsigned char* sk)
{
  fk::wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < HEAD_DIM / 16; ++ks) {
    const int panel = ks / 4, byte = (ks % 4) * 32;
    fk::wgmma_m64k16_bf16<BN, 0>(&s[0][0], fk::wgmma_desc_kmajor_128b(sq + panel * kQBytes / kPanels + byte),
                                 fk::wgmma_desc_kmajor_128b(sk + panel * kKvPanelBytes + byte), ks == 0 ? 0 : 1);
  }
  fk::wgmma_commit();
}

// O[64][d] += P[64][16*Steps] V[16*Steps][d]: P from registers, V N-major (two 64-column panels kKvPanelBytes
// apart; a k16 step is 16 key rows = 2048 B further).
template <int Steps>
__device__ __forceinline__ void issue_pv(float (&o)[kOGroups][4], const unsigned (&p)[kPSteps][4],
                                         const unsigned char* sv)
{
  fk::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Steps; ++kk)
    fk::wgmma_m64k16_bf16_rs<HEAD_DIM>(&o[0][0], p[kk], fk::wgmma_desc_nmajor_128b(sv + kk * 2048, kKvPanelBytes));
  fk::wgmma_commit();
}

// P V of the key tile that holds a warpgroup's diagonal: with BN = 128, consumer 0's rows [q0, q0 + 64) see only
// the tile's first 64 keys, so the second half of P is 0 and its k16 steps are left out. (S keeps the whole
// tile: an m64n64 S wgmma here leaves half of S to the mask, and ptxas then serialises every wgmma of the
// kernel, C7515.)
__device__ __forceinline__ void issue_pv_tile(float (&o)[kOGroups][4], const unsigned (&p)[kPSteps][4],
                                              const unsigned char* sv, bool half)
{
  if (BN == 128 && half) issue_pv<kPSteps / 2>(o, p, sv);
  else issue_pv<kPSteps>(o, p, sv);
}

// Keys after a row's own position get -inf. Float (g, e) of thread t sits at row 16w + t/4 + 8(e/2) of the
// warpgroup's 64 and column 8g + 2(t%4) + e%2 of the tile (fk::wgmma_acc_row / _col).
__device__ __forceinline__ void mask_causal(float (&s)[kSGroups][4], int first_row, int k0)
{
  const int t = threadIdx.x % 128;
#pragma unroll
  for (int g = 0; g < kSGroups; ++g)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (k0 + fk::wgmma_acc_col(4 * g + e, t) > first_row + fk::wgmma_acc_row(4 * g + e, t)) s[g][e] = fk::neg_inf();
}

// P (softmax weights in fp32, S's layout) as bf16 A fragments: n8 groups 2kk and 2kk+1 form k16 step kk.
__device__ __forceinline__ void to_bf16(unsigned (&p)[kPSteps][4], const float (&s)[kSGroups][4])
{
#pragma unroll
  for (int kk = 0; kk < kPSteps; ++kk) fk::c_to_a_bf16(p[kk], s[2 * kk], s[2 * kk + 1]);
}

// The ring slot of the block's n-th key tile (a running count over its work tiles) and the parity of its fill.
__device__ __forceinline__ int slot_of(int n) { return n % STAGES; }
__device__ __forceinline__ unsigned parity_of(int n) { return (n / STAGES) & 1; }

// A consumer warpgroup: for each work tile the producer posts, its 64 query rows against every key tile up to
// the diagonal, then O / l to o.
__device__ __forceinline__ void consume(const Ring& ring, const unsigned char* sq, const unsigned char* sk,
                                       const unsigned char* sv, unsigned char* staging, const CUtensorMap* tmO,
                                       __nv_bfloat16* __restrict__ o, int batch, int hq, int hkv, int seq,
                                       float softmax_scale)
{
  fk::warpgroup_reg_alloc<kConsumerRegs>();
  const int c = threadIdx.x / 128 - 1;   // consumer 0 / 1: rows [64c, 64c + 64) of a work tile
  const unsigned char* const my_q = sq + c * kQBytes;
  const float scale_log2 = softmax_scale * 1.4426950408889634f;  // scores to log2 units

  float acc_s[kSGroups][4];  // S (then P in fp32) [64][BN]
  float acc_o[kOGroups][4];  // O [64][d], scaled by 2^-m
  unsigned p_frag[kPSteps][4];  // P in bf16, the A operand of P V

  if (PINGPONG && c == 1) fk::named_barrier_arrive(1, 256);  // consumer 0 takes the first turn
  int n = 0;  // key tiles this block has consumed: turns the ring
  for (int round = 0;; ++round) {
    fk::mbar_wait(&ring.q_full[c], round & 1);
    const int L = ring.tile_of[c];
    if (L < 0) break;
    const WorkTile w = work_tile(L, batch, hq, hkv, seq);
    const int first_row = w.q0 + c * kRows;  // query index of the warpgroup's row 0
    const bool half_last = c == 0;           // see issue_pv_tile
    float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows t/4, t/4+8 of the warp
#pragma unroll
    for (int g = 0; g < kOGroups; ++g) acc_o[g][0] = acc_o[g][1] = acc_o[g][2] = acc_o[g][3] = 0.0f;

    // Tile j's S is masked where it crosses this warpgroup's diagonal (j*BN + BN - 1 > first_row). Key 0 is
    // unmasked for every row, so each row's max is finite after tile 0 and fully masked rows give P = 0.
    // The consumer frees its Q once the work tile's last S wgmma retired.
    auto free_q_after = [&](int j) {
      if (j == w.n_tiles - 1 && threadIdx.x % 128 == 0) fk::mbar_arrive(&ring.q_empty[c]);
    };
    // S_j = Q K_j^T on its own (ring position n), masked, and its softmax with O rescaled: P_j in p_frag.
    auto score_alone = [&](int j) {
      fk::mbar_wait(&ring.k_full[slot_of(n)], parity_of(n));
      turn_begin(c);
      issue_qk(acc_s, my_q, sk + slot_of(n) * kKvBytes);
      turn_end(c);
      fk::wgmma_wait<0>();
      fk::wgmma_fence_acc<BN / 2>(&acc_s[0][0]);
      release(&ring.k_empty[slot_of(n)]);
      free_q_after(j);
      if (j * BN + BN - 1 > first_row) mask_causal(acc_s, first_row, j * BN);
      fk::online_softmax_mma_rows<kSGroups, kOGroups, EXP2 == 1>(acc_s, acc_o, row_max, row_sum, scale_log2);
      to_bf16(p_frag, acc_s);
    };
    // O += P_j V_j on its own (ring position n).
    auto accumulate_alone = [&](int j) {
      fk::mbar_wait(&ring.v_full[slot_of(n)], parity_of(n));
      turn_begin(c);
      issue_pv_tile(acc_o, p_frag, sv + slot_of(n) * kKvBytes, half_last && j == w.n_tiles - 1);
      turn_end(c);
      fk::wgmma_wait<0>();
      fk::wgmma_fence_acc<HEAD_DIM / 2>(&acc_o[0][0]);
      release(&ring.v_empty[slot_of(n)]);
    };

    if (!OVERLAP) {
      for (int j = 0; j < w.n_tiles; ++j, ++n) {
        score_alone(j);
        accumulate_alone(j);
      }
    } else {
      score_alone(0);  // tile 0: O is still zero
      for (int j = 1; j < w.n_tiles; ++j, ++n) {
        const int s = slot_of(n + 1), sp = slot_of(n);  // this tile's slot, the previous tile's
        fk::mbar_wait(&ring.k_full[s], parity_of(n + 1));
        fk::mbar_wait(&ring.v_full[sp], parity_of(n));
        turn_begin(c);
        issue_qk(acc_s, my_q, sk + s * kKvBytes);  // S_j
        issue_pv<kPSteps>(acc_o, p_frag, sv + sp * kKvBytes);  // O += P_{j-1} V_{j-1}, still in flight below
        turn_end(c);
        fk::wgmma_wait<1>();  // S_j retired; P V keeps running
        fk::wgmma_fence_acc<BN / 2>(&acc_s[0][0]);
        release(&ring.k_empty[s]);
        free_q_after(j);
        if (j * BN + BN - 1 > first_row) mask_causal(acc_s, first_row, j * BN);
        // The softmax rescale factor lands in `alpha` (a one-group stand-in for O, which the wgmma still
        // writes): rows t/4 in [0][0], t/4 + 8 in [0][2].
        float alpha[1][4] = {{1.0f, 1.0f, 1.0f, 1.0f}};
        fk::online_softmax_mma_rows<kSGroups, 1, EXP2 == 1>(acc_s, alpha, row_max, row_sum, scale_log2);
        fk::wgmma_wait<0>();  // P_{j-1} V_{j-1} retired: O and p_frag are free
        fk::wgmma_fence_acc<HEAD_DIM / 2>(&acc_o[0][0]);
        release(&ring.v_empty[sp]);
#pragma unroll
        for (int g = 0; g < kOGroups; ++g)
          acc_o[g][0] *= alpha[0][0], acc_o[g][1] *= alpha[0][0], acc_o[g][2] *= alpha[0][2], acc_o[g][3] *= alpha[0][2];
        to_bf16(p_frag, acc_s);
      }
      accumulate_alone(w.n_tiles - 1);  // the last tile's P V
      ++n;
    }

    // O / l in bf16: pairs of adjacent columns of rows t/4 and t/4 + 8 (inv[0], inv[1]).
    const float inv[2] = {1.0f / row_sum[0], 1.0f / row_sum[1]};
    if (EPI > 0) {
      // A thread's two rows are 8 apart from a multiple of 16 (tile-relative): bit 3 of the row says which.
      OStore(OTile{staging}, c).store(
          reinterpret_cast<const OTile::Acc&>(acc_o), c,
          [&](int row, int, float v0, float v1) {
            const float f = (row & 8) ? inv[1] : inv[0];
            return __floats2bfloat162_rn(v0 * f, v1 * f);
          },
          [&](const void* panel, int row, int col) { fk::tma_store_2d(tmO, panel, col, w.q_row + row); });
    } else {
      const int t = threadIdx.x % 128;
      __nv_bfloat16* const out = o + (size_t)(w.q_row + c * kRows) * HEAD_DIM;
#pragma unroll
      for (int g = 0; g < kOGroups; ++g)
#pragma unroll
        for (int e = 0; e < 4; e += 2) {
          const int row = fk::wgmma_acc_row(4 * g + e, t), col = fk::wgmma_acc_col(4 * g + e, t);
          *reinterpret_cast<__nv_bfloat162*>(out + (size_t)row * HEAD_DIM + col) =
              __floats2bfloat162_rn(acc_o[g][e] * inv[e / 2], acc_o[g][e + 1] * inv[e / 2]);
        }
    }
  }
  if (EPI > 0) OStore(OTile{staging}, c).drain();  // the staging must outlive the stores' reads
  turns_done(c);
}

// The producer's one thread: per work tile, each consumer's Q with the tile's number once that consumer freed its
// Q, then K_j and V_j for every key tile, each into a slot once both consumers (of every cluster block) released
// it (a fresh barrier passes parity 1 at once). Posts tile -1 to both consumers when the work runs out.
__device__ __forceinline__ void produce(const Ring& ring, unsigned char* sq, unsigned char* sk, unsigned char* sv,
                                       const CUtensorMap* tmQ, const CUtensorMap* tmK, const CUtensorMap* tmV,
                                       unsigned* tile_counter, int batch, int hq, int hkv, int seq)
{
  const unsigned rank = CLUSTER > 1 ? fk::cluster_ctarank() : 0;
  const int tiles = batch * hq * (seq / kTileRows);
  int L = PERSISTENT ? (int)blockIdx.x : (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  int n = 0;  // key tiles this block has loaded: turns the ring
  for (int round = 0;; ++round) {
    // Ask for the following tile now, so the atomic's round trip hides behind this tile's loads.
    const int next = PERSISTENT && L < tiles ? (int)gridDim.x + (int)atomicAdd(tile_counter, 1u) : tiles;
    const WorkTile w = work_tile(L, batch, hq, hkv, seq);
    for (int c = 0; c < 2; ++c) {
      fk::mbar_wait(&ring.q_empty[c], (round & 1) ^ 1);
      ring.tile_of[c] = L < tiles ? L : -1;
      if (L < tiles) {
        fk::mbar_arrive_expect_tx(&ring.q_full[c], kQBytes);
        for (int p = 0; p < kPanels; ++p)
          fk::tma_load_2d(sq + c * kQBytes + p * (kQBytes / kPanels), tmQ, &ring.q_full[c], p * kPanel,
                          w.q_row + c * kRows);
      } else {
        fk::mbar_arrive(&ring.q_full[c]);  // publishes tile -1
      }
    }
    if (L >= tiles) break;
    for (int j = 0; j < w.n_tiles; ++j, ++n) {
      const int s = slot_of(n);
      const unsigned parity = parity_of(n) ^ 1;
      fk::mbar_wait(&ring.k_empty[s], parity);
      fk::mbar_arrive_expect_tx(&ring.k_full[s], kKvBytes);
      for (int p = 0; p < kPanels; ++p)
        load_box(p, sk + s * kKvBytes + p * kKvPanelBytes, tmK, &ring.k_full[s], p * kPanel, w.kv_row + j * BN, rank);
      fk::mbar_wait(&ring.v_empty[s], parity);
      fk::mbar_arrive_expect_tx(&ring.v_full[s], kKvBytes);
      for (int p = 0; p < kPanels; ++p)
        load_box(kPanels + p, sv + s * kKvBytes + p * kKvPanelBytes, tmV, &ring.v_full[s], p * kPanel,
                 w.kv_row + j * BN, rank);
    }
    L = next;
  }
}

extern "C" __global__ void __launch_bounds__(384, 1)
attention_prefill_fa3(const __grid_constant__ CUtensorMap tmQ,  // q as [BATCH*HQ*S][D], box 64 x 64
                      const __grid_constant__ CUtensorMap tmK,  // k as [BATCH*HKV*S][D], box BN x 64
                      const __grid_constant__ CUtensorMap tmV,  // v as [BATCH*HKV*S][D], box BN x 64
                      const __grid_constant__ CUtensorMap tmO,  // o as [BATCH*HQ*S][D], box 64 x 64 (EPI > 0)
                      __nv_bfloat16* __restrict__ o,            // [BATCH, HQ, S, D]
                      unsigned* tile_counter,                   // PERSISTENT: work tiles handed out past the grid
                      int BATCH, int HQ, int HKV, int S, float softmax_scale)
{
  extern __shared__ unsigned char smem_raw[];
  // 128B-swizzled tiles need 1024-byte aligned atoms.
  unsigned char* const sq = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);  // [2 consumers] x kQBytes
  unsigned char* const sk = sq + 2 * kQBytes;                               // [STAGES] x kKvBytes
  unsigned char* const sv = sk + STAGES * kKvBytes;                         // [STAGES] x kKvBytes
  unsigned char* const staging = sv + STAGES * kKvBytes;                   // [2 consumers] x EPI x 8 KiB
  unsigned long long* const bars = reinterpret_cast<unsigned long long*>(staging + 2 * EPI * 8192);
  const Ring ring{bars,
                  bars + 2,
                  bars + 4,
                  bars + 4 + STAGES,
                  bars + 4 + 2 * STAGES,
                  bars + 4 + 3 * STAGES,
                  reinterpret_cast<int*>(bars + 4 + 4 * STAGES)};

  if (threadIdx.x == 0) {
    for (int c = 0; c < 2; ++c) {
      fk::mbar_init(&ring.q_full[c], 1);
      fk::mbar_init(&ring.q_empty[c], 1);
    }
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&ring.k_full[s], 1);
      fk::mbar_init(&ring.v_full[s], 1);
      fk::mbar_init(&ring.k_empty[s], 2 * CLUSTER);
      fk::mbar_init(&ring.v_empty[s], 2 * CLUSTER);
    }
    fk::fence_barrier_init();
  }
  // No block may arrive on, or multicast into, a peer whose barriers are not initialised yet.
  if (CLUSTER > 1) fk::cluster_sync();
  else __syncthreads();

  if (threadIdx.x < 128) {
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    if (threadIdx.x == 0) produce(ring, sq, sk, sv, &tmQ, &tmK, &tmV, tile_counter, BATCH, HQ, HKV, S);
  } else {
    consume(ring, sq, sk, sv, staging, &tmO, o, BATCH, HQ, HKV, S, softmax_scale);
  }
  // A block must not exit while peers may still multicast into it or arrive on its barriers.
  if (CLUSTER > 1) {
    __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
    fk::cluster_sync();
  }
}
