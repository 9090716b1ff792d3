/* forgek
{
  "name": "attention_prefill_fa3_wgmma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "wgmma", "warp_specialization", "mbarrier_pipeline", "setmaxnreg", "online_softmax",
                 "tma_multicast", "thread_block_cluster"],
  "controls": {"tile": ["BN"], "mbarrier_pipeline": ["STAGES"], "softmax_overlap": ["OVERLAP"],
               "pingpong": ["PINGPONG"], "tma_multicast": ["CLUSTER"]},
  "params": {"BN": [64, 128], "STAGES": [2, 3], "OVERLAP": [0, 1], "PINGPONG": [0, 1], "CLUSTER": [1, 2, 4],
             "HEAD_DIM": 128},
  "let": {"bm": "128",
          "smem_bytes": "bm*HEAD_DIM*2 + 2*STAGES*BN*HEAD_DIM*2 + 1024 + 8*(1 + 4*STAGES)"},
  "constraints": ["D == HEAD_DIM", "S % bm == 0", "HQ % HKV == 0", "(HQ / HKV) % CLUSTER == 0",
                  "smem_bytes <= 232448"],
  "tensor_maps": [
    {"name": "tmQ", "tensor": "q", "shape": ["BATCH*HQ*S", "D"], "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmK", "tensor": "k", "shape": ["BATCH*HKV*S", "D"], "box": ["BN", "64"], "swizzle": "128B"},
    {"name": "tmV", "tensor": "v", "shape": ["BATCH*HKV*S", "D"], "box": ["BN", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "attention_prefill_fa3",
     "grid": ["HQ", "BATCH", "S / bm"], "block": [384], "cluster": ["CLUSTER", 1, 1], "smem": "smem_bytes",
     "args": ["tmQ", "tmK", "tmV", "o", "HQ", "HKV", "S", "softmax_scale"]}
  ]
}
*/
// Causal GQA prefill attention in the FlashAttention-3 design: TMA, wgmma, a producer warpgroup, online softmax.
//
// A block owns 128 query rows of one (batch, head): warpgroup 0 is the producer (one thread issues TMA),
// warpgroups 1 and 2 are consumers of 64 rows each. Q is loaded once; K and V tiles of BN keys stream through
// a ring of STAGES slots guarded by full / empty mbarriers (K and V have their own, so S = Q K^T can start
// before V lands). Per key tile, a consumer warpgroup computes
//   S = Q K^T          wgmma m64nBNk16 x 8, Q [64][d] and K [keys][d] both K-major in shared memory;
//   causal mask        only on the tile that crosses the warpgroup's diagonal (later tiles are never loaded);
//   online softmax     on the S accumulators in registers (fk::online_softmax_mma_rows: the wgmma accumulator
//                      layout is the mma m16n8 layout, n8 group by n8 group);
//   O += P V           P rounded to bf16 in registers (fk::c_to_a_bf16) is the register A operand of
//                      wgmma m64n128k16 x BN/16; V [keys][d] is read N-major (transposed B).
// Query tiles run longest first (the grid's slowest dimension is the tile, counted down), and the heads of one
// KV head sit next to each other in the grid, so their K / V tiles are read from L2 by up to 4 blocks at once.
//
// Params, one idea each:
//   BN        keys per tile (64 or 128): wider S wgmmas and fewer softmax rounds, against registers and smem;
//   STAGES    depth of the K / V ring;
//   OVERLAP   1: issue S_j = Q K_j^T and O += P_{j-1} V_{j-1} together, and do softmax(S_j) while the P V wgmma
//             runs (FA3's intra-warpgroup overlap); O is rescaled once that wgmma retires;
//   PINGPONG  1: the two consumers take turns issuing their wgmmas (named barriers 1 and 2), so one's softmax
//             runs while the other's matrix products hold the tensor cores;
//   CLUSTER   blocks of CLUSTER query heads that share a KV head (adjacent in x) form a cluster: each K / V tile
//             is four TMA boxes (K and V, two 64-column panels each), box i is loaded by cluster block
//             i % CLUSTER and multicast to all, so L2 serves each tile once per cluster instead of per block.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/mma.cuh>
#include <forgek/softmax.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

constexpr int kRows = 64;                       // query rows per consumer warpgroup
constexpr int kPanel = 64;                      // d columns per 128-byte swizzle row
constexpr int kPanels = HEAD_DIM / kPanel;      // 2 panels of d
constexpr int kQBytes = kRows * HEAD_DIM * 2;   // one consumer's Q: [kPanels][64 rows][64 d], 16 KiB
constexpr int kKvBytes = BN * HEAD_DIM * 2;     // one K or V tile: [kPanels][BN keys][64 d]
constexpr int kKvPanelBytes = BN * 128;         // [BN keys][64 d]
constexpr int kSGroups = BN / 8;                // n8 groups of S per thread: S is float[kSGroups][4]
constexpr int kOGroups = HEAD_DIM / 8;          // n8 groups of O per thread: O is float[kOGroups][4]
constexpr int kPSteps = BN / 16;                // k16 steps of P V
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128*40 + 256*232 <= 65536 (24 spills the loader)

struct Ring {
  unsigned long long* q_full;   // Q landed
  unsigned long long* k_full;   // [STAGES] K tile landed
  unsigned long long* v_full;   // [STAGES] V tile landed
  unsigned long long* k_empty;  // [STAGES] both consumers of every cluster block done reading K
  unsigned long long* v_empty;  // [STAGES] both consumers of every cluster block done reading V
};

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
// turn for consumer 0 and skips its own last hand-over, so each named barrier sees as many arrivals as syncs.
__device__ __forceinline__ void turn_begin(int c)
{
  if (PINGPONG) fk::named_barrier_sync(1 + c, 256);
}
__device__ __forceinline__ void turn_end(int c, bool last)
{
  if (PINGPONG && (c == 0 || !last)) fk::named_barrier_arrive(2 - c, 256);
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

// O[64][d] += P[64][BN] V[BN][d]: P from registers, V N-major (two 64-column panels kKvPanelBytes apart; a k16
// step is 16 key rows = 2048 B further).
__device__ __forceinline__ void issue_pv(float (&o)[kOGroups][4], const unsigned (&p)[kPSteps][4],
                                         const unsigned char* sv)
{
  fk::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kPSteps; ++kk)
    fk::wgmma_m64k16_bf16_rs<HEAD_DIM>(&o[0][0], p[kk], fk::wgmma_desc_nmajor_128b(sv + kk * 2048, kKvPanelBytes));
  fk::wgmma_commit();
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

// A consumer warpgroup: 64 query rows against every key tile up to the block's diagonal, then O / l to o.
__device__ __forceinline__ void consume(const Ring& ring, const unsigned char* sq, const unsigned char* sk,
                                       const unsigned char* sv, __nv_bfloat16* __restrict__ o, int q_row, int q0,
                                       float softmax_scale)
{
  fk::warpgroup_reg_alloc<kConsumerRegs>();
  const int n_tiles = (q0 + 2 * kRows) / BN;  // as the producer's
  const int c = threadIdx.x / 128 - 1;   // consumer 0 / 1: rows [64c, 64c + 64) of the block
  const int first_row = q0 + c * kRows;  // query index of the warpgroup's row 0
  const unsigned char* const my_q = sq + c * kQBytes;
  const float scale_log2 = softmax_scale * 1.4426950408889634f;  // scores to log2 units

  float acc_s[kSGroups][4];  // S (then P in fp32) [64][BN]
  float acc_o[kOGroups][4];  // O [64][d], scaled by 2^-m
  unsigned p_frag[kPSteps][4];  // P in bf16, the A operand of P V
  float row_max[2] = {fk::neg_inf(), fk::neg_inf()}, row_sum[2] = {0.0f, 0.0f};  // rows t/4 and t/4+8 of the warp
#pragma unroll
  for (int g = 0; g < kOGroups; ++g) acc_o[g][0] = acc_o[g][1] = acc_o[g][2] = acc_o[g][3] = 0.0f;

  if (PINGPONG && c == 1) fk::named_barrier_arrive(1, 256);  // consumer 0 takes the first turn
  fk::mbar_wait(ring.q_full, 0);

  // Tile j's S is masked where it crosses this warpgroup's diagonal (k0 + BN - 1 > first_row). Key 0 is
  // unmasked for every row, so each row's max is finite after tile 0 and fully masked rows give P = 0.

  if (!OVERLAP) {
    for (int j = 0; j < n_tiles; ++j) {
      const int s = j % STAGES;
      const unsigned parity = (j / STAGES) & 1;
      fk::mbar_wait(&ring.k_full[s], parity);
      turn_begin(c);
      issue_qk(acc_s, my_q, sk + s * kKvBytes);
      turn_end(c, false);
      fk::wgmma_wait<0>();
      fk::wgmma_fence_acc<BN / 2>(&acc_s[0][0]);
      release(&ring.k_empty[s]);
      if (j * BN + BN - 1 > first_row) mask_causal(acc_s, first_row, j * BN);
      fk::online_softmax_mma_rows<kSGroups, kOGroups>(acc_s, acc_o, row_max, row_sum, scale_log2);
      to_bf16(p_frag, acc_s);
      fk::mbar_wait(&ring.v_full[s], parity);
      turn_begin(c);
      issue_pv(acc_o, p_frag, sv + s * kKvBytes);
      turn_end(c, j == n_tiles - 1);
      fk::wgmma_wait<0>();
      fk::wgmma_fence_acc<HEAD_DIM / 2>(&acc_o[0][0]);
      release(&ring.v_empty[s]);
    }
  } else {
    // Tile 0: S_0 and its softmax alone (O is still zero).
    fk::mbar_wait(&ring.k_full[0], 0);
    turn_begin(c);
    issue_qk(acc_s, my_q, sk);
    turn_end(c, false);
    fk::wgmma_wait<0>();
    fk::wgmma_fence_acc<BN / 2>(&acc_s[0][0]);
    release(&ring.k_empty[0]);
    if (BN - 1 > first_row) mask_causal(acc_s, first_row, 0);
    fk::online_softmax_mma_rows<kSGroups, kOGroups>(acc_s, acc_o, row_max, row_sum, scale_log2);
    to_bf16(p_frag, acc_s);
    for (int j = 1; j < n_tiles; ++j) {
      const int s = j % STAGES, sp = (j - 1) % STAGES;  // this tile's slot, the previous tile's
      fk::mbar_wait(&ring.k_full[s], (j / STAGES) & 1);
      fk::mbar_wait(&ring.v_full[sp], ((j - 1) / STAGES) & 1);
      turn_begin(c);
      issue_qk(acc_s, my_q, sk + s * kKvBytes);       // S_j
      issue_pv(acc_o, p_frag, sv + sp * kKvBytes);    // O += P_{j-1} V_{j-1}, still in flight below
      turn_end(c, false);
      fk::wgmma_wait<1>();  // S_j retired; P V keeps running
      fk::wgmma_fence_acc<BN / 2>(&acc_s[0][0]);
      release(&ring.k_empty[s]);
      if (j * BN + BN - 1 > first_row) mask_causal(acc_s, first_row, j * BN);
      // The softmax rescale factor lands in `alpha` (a one-group stand-in for O, which the wgmma still
      // writes): rows t/4 in [0][0], t/4 + 8 in [0][2].
      float alpha[1][4] = {{1.0f, 1.0f, 1.0f, 1.0f}};
      fk::online_softmax_mma_rows<kSGroups, 1>(acc_s, alpha, row_max, row_sum, scale_log2);
      fk::wgmma_wait<0>();  // P_{j-1} V_{j-1} retired: O and p_frag are free
      fk::wgmma_fence_acc<HEAD_DIM / 2>(&acc_o[0][0]);
      release(&ring.v_empty[sp]);
#pragma unroll
      for (int g = 0; g < kOGroups; ++g)
        acc_o[g][0] *= alpha[0][0], acc_o[g][1] *= alpha[0][0], acc_o[g][2] *= alpha[0][2], acc_o[g][3] *= alpha[0][2];
      to_bf16(p_frag, acc_s);
    }
    const int sl = (n_tiles - 1) % STAGES;
    fk::mbar_wait(&ring.v_full[sl], ((n_tiles - 1) / STAGES) & 1);
    turn_begin(c);
    issue_pv(acc_o, p_frag, sv + sl * kKvBytes);
    turn_end(c, true);
    fk::wgmma_wait<0>();
    fk::wgmma_fence_acc<HEAD_DIM / 2>(&acc_o[0][0]);
    release(&ring.v_empty[sl]);
  }

  // O / l in bf16, straight from the accumulators: pairs of adjacent columns of rows t/4 and t/4 + 8.
  const int t = threadIdx.x % 128;
  const float inv[2] = {1.0f / row_sum[0], 1.0f / row_sum[1]};
  __nv_bfloat16* const out = o + (size_t)(q_row + c * kRows) * HEAD_DIM;
#pragma unroll
  for (int g = 0; g < kOGroups; ++g)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int row = fk::wgmma_acc_row(4 * g + e, t), col = fk::wgmma_acc_col(4 * g + e, t);
      *reinterpret_cast<__nv_bfloat162*>(out + (size_t)row * HEAD_DIM + col) =
          __floats2bfloat162_rn(acc_o[g][e] * inv[e / 2], acc_o[g][e + 1] * inv[e / 2]);
    }
}

extern "C" __global__ void __launch_bounds__(384, 1)
attention_prefill_fa3(const __grid_constant__ CUtensorMap tmQ,  // q as [BATCH*HQ*S][D], box 64 x 64
                      const __grid_constant__ CUtensorMap tmK,  // k as [BATCH*HKV*S][D], box BN x 64
                      const __grid_constant__ CUtensorMap tmV,  // v as [BATCH*HKV*S][D], box BN x 64
                      __nv_bfloat16* __restrict__ o,            // [BATCH, HQ, S, D]
                      int HQ, int HKV, int S, float softmax_scale)
{
  extern __shared__ unsigned char smem_raw[];
  // 128B-swizzled tiles need 1024-byte aligned atoms.
  unsigned char* const sq = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);  // [2 consumers] x kQBytes
  unsigned char* const sk = sq + 2 * kQBytes;                               // [STAGES] x kKvBytes
  unsigned char* const sv = sk + STAGES * kKvBytes;                         // [STAGES] x kKvBytes
  unsigned long long* const bars = reinterpret_cast<unsigned long long*>(sv + STAGES * kKvBytes);
  const Ring ring{bars, bars + 1, bars + 1 + STAGES, bars + 1 + 2 * STAGES, bars + 1 + 3 * STAGES};

  const int h = blockIdx.x, b = blockIdx.y;
  const int q_tile = gridDim.z - 1 - blockIdx.z;  // longest first
  const int q0 = q_tile * 2 * kRows;
  const int kvh = h / (HQ / HKV);
  const int q_row = (b * HQ + h) * S + q0;   // this block's first row of q / o as [BATCH*HQ*S][D]
  const int kv_row = (b * HKV + kvh) * S;    // this head's first row of k / v
  const int n_tiles = (q0 + 2 * kRows) / BN; // key tiles 0 .. the one holding the block's last query

  if (threadIdx.x == 0) {
    fk::mbar_init(ring.q_full, 1);
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
    // Producer: one thread streams Q once, then K_j and V_j for every tile; a slot is refilled once both
    // consumers have released it (a fresh barrier passes parity 1 at once).
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    const unsigned rank = CLUSTER > 1 ? fk::cluster_ctarank() : 0;
    if (threadIdx.x == 0) {
      fk::mbar_arrive_expect_tx(ring.q_full, 2 * kQBytes);
      for (int c = 0; c < 2; ++c)
        for (int p = 0; p < kPanels; ++p)
          fk::tma_load_2d(sq + c * kQBytes + p * (kQBytes / kPanels), &tmQ, ring.q_full, p * kPanel, q_row + c * kRows);
      for (int j = 0; j < n_tiles; ++j) {
        const int s = j % STAGES;
        const unsigned parity = ((j / STAGES) & 1) ^ 1;
        fk::mbar_wait(&ring.k_empty[s], parity);
        fk::mbar_arrive_expect_tx(&ring.k_full[s], kKvBytes);
        for (int p = 0; p < kPanels; ++p)
          load_box(p, sk + s * kKvBytes + p * kKvPanelBytes, &tmK, &ring.k_full[s], p * kPanel, kv_row + j * BN, rank);
        fk::mbar_wait(&ring.v_empty[s], parity);
        fk::mbar_arrive_expect_tx(&ring.v_full[s], kKvBytes);
        for (int p = 0; p < kPanels; ++p)
          load_box(kPanels + p, sv + s * kKvBytes + p * kKvPanelBytes, &tmV, &ring.v_full[s], p * kPanel,
                   kv_row + j * BN, rank);
      }
    }
  } else {
    consume(ring, sq, sk, sv, o, q_row, q0, softmax_scale);
  }
  // A block must not exit while peers may still multicast into it or arrive on its barriers.
  if (CLUSTER > 1) {
    __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
    fk::cluster_sync();
  }
}
