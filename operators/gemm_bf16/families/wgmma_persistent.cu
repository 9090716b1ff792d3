/* forgek
{
  "name": "gemm_wgmma_persistent",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "tma_multicast", "wgmma", "mbarrier_pipeline", "warp_specialization",
                 "setmaxnreg", "persistent_grid", "thread_block_cluster", "split_k", "cluster_dsmem"],
  "controls": {"mbarrier_pipeline": ["STAGES", "S_STAGES"], "raster": ["GROUP_M"], "tma_store": ["EPI"],
               "split_k": ["SBN"], "k_step": ["S_BK"], "warp_specialization": ["S_CONS"],
               "cache_hint": ["S_HINT"]},
  "params": {"BM": [128], "BN": [256], "STAGES": [3, 4], "CLUSTER_M": [1],
             "GROUP_M": [8, 16], "EPI": [1, 2], "L2P": [0],
             "SBN": [64, 128], "SK_CTAS": [128], "S_STAGES": [6, 8], "S_L2P": [0],
             "S_BK": [64, 128], "S_CONS": [1, 2], "S_CA": [1], "S_HINT": [0, 1], "S_KINT": [0],
             "S_LEAN": [0], "SK_TAIL": [0], "STAGGER": [0]},
  "let": {
    "skinny": "M <= 64",
    "split_k": "min(8, pow2(log2(max(1, SK_CTAS / max(1, N / SBN)))))",
    "a_rows": "skinny*(64 / S_CA) + (1 - skinny)*BM",
    "b_rows": "skinny*S_BK + (1 - skinny)*64",
    "tiles_m": "ceil_div(M, BM)",
    "units": "tiles_m / CLUSTER_M * (N / BN)",
    "staging": "(EPI == 1)*2*16384 + (EPI == 2)*2*BN*128",
    "smem_big": "STAGES*(BM + BN)*128 + staging + 2048",
    "sk_slot": "(64 + SBN)*S_BK*2",
    "smem_skinny": "S_STAGES*sk_slot + 2048",
    "smem_bytes": "skinny*smem_skinny + (1 - skinny)*smem_big",
    "ctas": "skinny*(N / SBN)*split_k + (1 - skinny)*min(units, 132 / CLUSTER_M)*CLUSTER_M",
    "cluster_x": "skinny*split_k*S_CA + (1 - skinny)*CLUSTER_M",
    "threads": "skinny*(128 + 128*S_CONS) + (1 - skinny)*384",
    "sk_on": "(1 - skinny)*(SK_TAIL > 0)"
  },
  "constraints": ["BM * BN == 128*256",
                  "smem_big <= 232448",
                  "smem_skinny <= 232448",
                  "64*(SBN + 8)*4 <= S_STAGES*sk_slot",
                  "S_CONS == 1 || SBN >= 128", "SBN / S_CONS < 256 || S_BK <= 128",
                  "N % BN == 0", "N % SBN == 0", "K % 64 == 0",
                  "skinny || tiles_m % CLUSTER_M == 0",
                  "SK_TAIL == 0 || CLUSTER_M == 1",
                  "STAGGER < STAGES", "STAGGER == 0 || SK_TAIL == 0",
                  "!skinny || K % (S_BK*split_k) == 0",
                  "!skinny || ((N / SBN) % S_CA == 0 && split_k*S_CA <= 8)"],
  "workspaces": [
    {"name": "sk_part", "bytes": "sk_on*ctas*BM*BN*4", "zero": false},
    {"name": "sk_flag", "bytes": "sk_on*ctas*2*4", "zero": true}
  ],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["a_rows", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["b_rows", "64"], "swizzle": "128B"},
    {"name": "tmA_p", "tensor": "A", "box": ["a_rows", "64"], "swizzle": "128B", "l2_promotion": "256B"},
    {"name": "tmB_p", "tensor": "B", "box": ["b_rows", "64"], "swizzle": "128B", "l2_promotion": "256B"},
    {"name": "tmC", "tensor": "C", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_wgmma_persistent",
     "grid": ["ctas"], "block": ["threads"], "cluster": ["cluster_x", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "tmA_p", "tmB_p", "tmC", "C", "M", "N", "K", "skinny", "split_k",
              "sk_part", "sk_flag"]}
  ]
}
*/
// Hopper GEMM C[M,N] = A[M,K] · B[K,N] (bf16 in, fp32 accumulate, bf16 out) with two paths in one
// kernel, chosen per shape by the manifest (`skinny` = M <= 64) and passed in as a uniform argument:
//
// Big path (M > 64): persistent and warp-specialised.
//   The grid holds one block per SM (132 on H200), in clusters of CLUSTER_M; cluster u walks the
//   "units" u, u + #clusters, ... of a grouped raster (GROUP_M unit-rows at a time, column-major
//   inside a group, so the clusters resident together share A row-panels and B column-panels in
//   L2). A unit is CLUSTER_M vertically adjacent BM x BN tiles, one per block of the cluster.
//   Warpgroup 0 is the producer (setmaxnreg.dec): one thread issues the TMA loads of every k-tile of
//   every tile of its block into a STAGES-deep ring, running ahead across tile boundaries, so the
//   ring is already full when the consumers start the next tile (no pipeline fill per tile).
//   Warpgroups 1 and 2 are consumers (setmaxnreg.inc), cooperating on one tile: consumer c owns rows
//   [c*BM/2, (c+1)*BM/2) and all BN columns. With CLUSTER_M = 2 the two blocks' tiles share their
//   B tile: each block loads half of the 64-column B panels and multicasts them to both blocks.
//   Epilogue (EPI): 0 = registers straight to global memory (bf16x2 stores; kept in the code, out
//                       of the domain: 5-9% slower than 1 on H200);
//                   1 = registers -> 128B-swizzled shared staging -> TMA store (asynchronous: the
//                       consumer goes on with the next tile while the copy engine writes C), in
//                       rounds of 64 rows x 128 columns through 16 KiB of staging per consumer;
//                   2 = the same with staging for 64 rows x BN columns (one round per 64-row slice,
//                       more shared memory, so fewer STAGES fit).
//   SK_TAIL = 1 (CLUSTER_M = 1 only; correct on every config on H200 but 7-11% slower at 4096^3 and
//   no faster at 8192^3, so the domain is pinned to 0; see "Measured" below): stream-K for the tail
//   ("data-parallel + one-tile stream-K", Osama et al. 2023). With T tiles on G = gridDim.x
//   blocks, W = T / G full waves and R = T % G (R > 0, W >= 1), the first (W - 1)*G tiles stay
//   data-parallel (block b: tiles b, b + G, ...), and the last S = G + R tiles are stream-K: their
//   S * k_tiles iterations, linearised as (tile, k-tile) with the k-tile fastest, are cut into G
//   contiguous ranges, block b taking
//   [b*S*k_tiles/G, (b+1)*S*k_tiles/G). A range holds >= k_tiles iterations, so it is at most
//   [the end of one tile] + [whole tiles] + [the start of one tile], and every tile is shared by at
//   most 2 blocks. E.g. 4096^3, 128x256: T = 512, W = 3, R = 116: 264 tiles data-parallel (2 per
//   block), then 248 tiles x 64 k-tiles = 15872 iterations, 120-121 per block (~1.88 tiles), so
//   the kernel lasts ~3.88 tile times instead of 4.
//   Fix-up: the block that owns a tile's k-tile 0 finishes it. A block whose range starts inside
//   a tile (always its first stream-K segment) computes its part, writes the fp32 accumulators to
//   its slot of the workspace `sk_part` (fragment order, float4 per thread, coalesced) and sets
//   its flag in `sk_flag` to 1 (st.release.gpu after a __threadfence and a consumer barrier); it
//   writes no C. The owner of k-tile 0 reaches that tile at the end of its range, spins until the
//   flags of the next block(s) read 1 (ld.acquire.gpu), resets them to 0, adds their partials
//   (ld.global.cg) and runs the normal epilogue. A block waits only on higher-numbered blocks, and
//   only for work they do first, so the waits cannot deadlock: all G blocks are resident (one per
//   SM, grid <= #SMs). The flags are zeroed before every launch by the harness (manifest:
//   "zero": true; the reset only makes the kernel self-cleaning, so that it stays correct where a
//   workspace is not re-zeroed). Per consumer warpgroup one flag and one half of the partial, so
//   the two consumers never wait for each other. Workspaces: sk_part [G][2][BM/2 x BN] fp32
//   (17 MB for G = 132; poisoned, never read before its flag is set), sk_flag [G][2] u32.
//   The producer walks the same (tile, k-range) sequence and loads exactly those k-tiles.
//   SK_TAIL = 2: stream-K over the remainder only. All W full waves stay data-parallel; the last
//   R tiles' R * k_tiles iterations are cut into min(G, 2R) ranges, so every range holds at least
//   k_tiles / 2 iterations and a tile is shared by at most 3 blocks (the owner waits for each).
//   The region is small enough to stay in L2 (4096^3: 116 tiles, ~30 MB of A and B panels against
//   SK_TAIL = 1's 248 tiles and 48 MB), and the tail lasts ~R/G of a tile instead of a whole one:
//   4096^3 3.88 tile times instead of 4, 8192^3 (T = 2048, R = 68) 15.52 instead of 16.
//   Measured on H200 (fourth session): correct on every config, but 4096^3 0.925-0.934x of cuBLAS
//   against 0.993x without (8192^3 unchanged), so it is out of the domain too: even an L2-resident
//   stream-K region runs its k-tiles far slower than a data-parallel wave, whose blocks read the
//   same A and B k-slices at the same moment.
//
// Skinny path (M <= 64, e.g. M = 64, N = K = 8192, bound by streaming B once from DRAM):
//   split-K over a cluster. N/SBN column tiles x split_k K-slices give ~SK_CTAS blocks (split_k a
//   power of two <= 8), so that many SMs stream B, each reading SBN*2 contiguous bytes per row of B.
//   A cluster holds split_k x S_CA blocks: the split_k blocks of one column tile sum their partials
//   through distributed shared memory; the S_CA column tiles of one K-slice share A, each block
//   loading 64/S_CA rows of every A box and multicasting them (cross-block empty barriers as in the
//   big path). A block has 1 producer warpgroup and S_CONS consumer warpgroups (block size
//   128 + 128*S_CONS); consumer c owns SBN/S_CONS columns. A ring slot holds S_BK k: B arrives as
//   SBN/64 boxes of S_BK x 64 (one TMA per 64-column panel), A as S_BK/64 boxes of 64 x 64.
//   Each block computes a 64 x SBN fp32 partial over its K-slice (K-slices contiguous, or with
//   S_KINT = 1 interleaved slot by slot between the split_k blocks), parks it in its own shared
//   memory, and after a cluster barrier block r sums rows [r*64/split_k, (r+1)*64/split_k) of all
//   split_k partials through distributed shared memory and writes them to C as bf16. No workspace,
//   no second launch. S_LEAN = 1 (not yet measured): prefetch the tensor maps, and with split_k = 1
//   store the accumulators straight to C (no shared partial, no cluster barriers).
//   S_HINT = 1: B loads carry an L2 evict_first policy (B is read once), A loads evict_last. This is
//   the big win (45.9 -> 41.4 us). Likely reason (not profiled): the timing harness flushes L2 with a
//   memset, so L2 starts full of dirty lines, and normal-priority B fills evict (write back) them
//   while the kernel streams.
//
// Measured on H200 (2026-11-29, table in ../README.md), against cuBLAS in the same process:
//   big path 128x256, STAGES 3, EPI 1: 0.99x at 4096^3, 1.01-1.02x at 8192^3; cluster 2 is on par
//   only because the remote empty-barrier arrivals use .release.cta (with .release.cluster it was
//   1.6-1.9x slower). SK_TAIL = 1 (second session): 4096^3 195-200 us vs 178-183 us with SK_TAIL 0
//   (cuBLAS 177), 8192^3 on par with SK_TAIL 0; the no-memset variant (flags self-reset) is the
//   same, so the per-launch memset of the flags is not the cost. Likely reason (not profiled): the
//   stream-K blocks sit at scattered k offsets (block b starts at k-tile 120.24*b mod 64), so blocks
//   sharing an A row-panel or B column-panel no longer read it in k lockstep as a data-parallel wave
//   does, and the stream-K phase (working set 48 MB at 4096^3, ~84 MB at 8192^3, L2 50 MB) runs
//   ~1.3-1.4x slower per k-tile, eating the 3% the balanced tail saves. CUTLASS's sm90 stream-K
//   scheduler splits the stream-K units into up to 8 groups so that unit j of every group covers
//   the same k extents, for this reason; that, or stream-K over the last partial wave only (a
//   smaller region), would be the next thing to try.
//   Skinny path, best SBN 64, no split (128 blocks), S_STAGES 8, S_HINT 1:
//   40.8 us vs cuBLAS 43.0 us (1.056x). Clusters of 4 or more blocks are 54-61 us whatever they do
//   (split 4, or split 2 x S_CA 2, or S_CA 4): presumably not all 32 such clusters of
//   one-block-per-SM blocks fit on the GPCs at once.
//
// Shared-memory layout (after 256 B of mbarriers; data 1024-aligned for the 128-byte swizzle):
//   big ring slot:     A [BM][64 k]               K-major, one 128 B row per m (box BM x 64 of tmA)
//                      B [BN/64][64 k][64 n]      N-major, one 128 B row per k (64 x 64 boxes of tmB);
//                                                 wgmma reads B transposed (tnsp-b = 1)
//   skinny ring slot:  A [S_BK/64][64][64 k]      (boxes 64/S_CA x 64 of tmA)
//                      B [SBN/64][S_BK k][64 n]   (boxes S_BK x 64 of tmB; wgmma LBO = S_BK*128)
//   big path, EPI > 0: 2 consumers x kEpiPanels staging panels [64 rows][64 n] bf16
//   skinny path, after the mainloop: the ring is reused for the fp32 partial [64][SBN + 8].
// Rows of A past M are zero-filled by TMA; rows of C past M are never written.
// L2P (big path) and S_L2P (skinny path) pick the loads' tensor maps: 0 = no L2 promotion,
// 1 = 256-byte L2 promotion (each 128 B row of a box fetches its 256 B-aligned neighbourhood into
// L2, which the next panel's box then hits).
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

typedef unsigned long long u64;

constexpr int kBK = 64;                        // k per ring slot: one 128 B swizzle row of bf16
constexpr int kPanelBytes = 64 * kBK * 2;      // one 64 x 64 bf16 box: 8 KiB
constexpr int kMaxStages = 8;                  // barrier slots reserved (full + empty)
constexpr int kBarrierBytes = 256;             // 2 * kMaxStages mbarriers of 8 B, padded
constexpr unsigned kProducerRegs = 40;         // 128*40 + 256*232 <= 65536 registers of the SM
constexpr unsigned kConsumerRegs = 232;

// Big path: per ring slot A [BM][64] and B [BN/64][64][64]; a consumer owns BM/2 rows.
constexpr int kBigABytes = BM * kBK * 2;
constexpr int kBigBBytes = BN * kBK * 2;
constexpr int kBigRows = BM / 2;               // rows of the tile one consumer owns
constexpr int kBigMI = kBigRows / 64;          // m64 wgmmas per k16 step (1 or 2)
constexpr int kEpiPanels = EPI == 2 ? BN / 64 : 2;         // 64-column panels per epilogue round
constexpr int kStagingBytes = kEpiPanels * kPanelBytes;  // per consumer: [kEpiPanels][64 rows][64 n] bf16

// Skinny path: per ring slot (S_BK k) A [S_BK/64][64][64] and B [SBN/64][S_BK][64]; consumer c of
// S_CONS owns SBN/S_CONS columns.
constexpr int kSkABytes = 64 * S_BK * 2;
constexpr int kSkBBytes = SBN * S_BK * 2;
constexpr int kSkPanel = S_BK * 128;           // one B panel [S_BK k][64 n]: the wgmma LBO
constexpr int kSkCols = SBN / S_CONS;
constexpr int kSkARows = 64 / S_CA;            // rows of each A box this block loads and multicasts
constexpr int kRedPitch = SBN + 8;             // floats per row of the fp32 partial (bank spread)

static_assert(STAGES <= kMaxStages && S_STAGES <= kMaxStages, "barrier slots");
static_assert(64 * kRedPitch * 4 <= S_STAGES * (kSkABytes + kSkBBytes), "partial must fit in the ring");
static_assert(kSkCols == 64 || kSkCols == 128 || kSkCols == 256, "consumer wgmma width");

// wgmma accumulator fragment of a 64-row slice: float i of thread (warp w of the warpgroup, lane l)
// is D[16w + l/4 + 8*((i/2)%2)][8*(i/4) + 2*(l%4) + i%2]; floats 4j+2h, 4j+2h+1 are two adjacent
// columns of row 16w + l/4 + 8h.

// ================================ big path: persistent, warp-specialised ========================

// The work of one block, as a sequence of (unit, k-tiles [kb, ke)): first the data-parallel units
// u0, u0 + step, ... < dp_end (whole k range), then (SK_TAIL only) its stream-K range [it, it_end)
// of the linearised (tile, k-tile) space of the tiles from sk_first on. With SK_TAIL = 0 the
// stream-K range is empty and this is the plain persistent loop over every unit.
struct TileWalk {
  int u, dp_end, step;  // data-parallel units
  int it, it_end;       // stream-K iterations: tile sk_first + it / k_tiles, k-tile it % k_tiles
  int sk_first, k_tiles;

  __device__ __forceinline__ bool next(int* unit, int* kb, int* ke)
  {
    if (u < dp_end) {
      *unit = u;
      *kb = 0;
      *ke = k_tiles;
      u += step;
      return true;
    }
    if (SK_TAIL && it < it_end) {
      const int t = it / k_tiles;
      *unit = sk_first + t;
      *kb = it - t * k_tiles;
      *ke = min(k_tiles, *kb + (it_end - it));
      it += *ke - *kb;
      return true;
    }
    return false;
  }
};

// First stream-K iteration of block b: ranges are [sk_start(b), sk_start(b + 1)); blocks from
// `blocks` on have empty ranges.
__device__ __forceinline__ int sk_start(int b, int sk_iters, int blocks)
{
  return b >= blocks ? sk_iters : (int)((long long)b * sk_iters / blocks);
}

// Unit index -> top-left corner of this block's BM x BN tile. Units form a grid of
// (tiles_m / CLUSTER_M) x (N / BN); they are walked GROUP_M unit-rows at a time, column-major inside
// a group; block `rank` of the cluster takes tile-row rank of the unit's CLUSTER_M tile-rows.
__device__ __forceinline__ void unit_tile(int u, int units_m, int units_n, unsigned rank, int* m0, int* n0)
{
  const int per_group = GROUP_M * units_n;
  const int first = (u / per_group) * GROUP_M;
  const int rows = min(units_m - first, GROUP_M);
  const int in_group = u % per_group;
  *m0 = ((first + in_group % rows) * CLUSTER_M + (int)rank) * BM;
  *n0 = (in_group / rows) * BN;
}

__device__ __forceinline__ void big_path(const CUtensorMap* tmA, const CUtensorMap* tmB, const CUtensorMap* tmC,
                                         __nv_bfloat16* __restrict__ C, int M, int N, int K, unsigned char* base,
                                         u64* full, u64* empty, float* __restrict__ sk_part, unsigned* sk_flag)
{
  unsigned char* const sA = base;                          // [STAGES][BM][64] bf16
  unsigned char* const sB = base + STAGES * kBigABytes;    // [STAGES][BN/64][64][64] bf16
  unsigned char* const sStage = sB + STAGES * kBigBBytes;  // EPI > 0: [2 consumers][kEpiPanels][64][64] bf16

  const int tid = threadIdx.x;
  const int wg = tid / 128;  // 0: producer, 1 and 2: consumers
  const unsigned rank = CLUSTER_M > 1 ? fk::cluster_ctarank() : 0;
  const int units_m = (M + BM - 1) / BM / CLUSTER_M, units_n = N / BN, units = units_m * units_n;
  const int cluster_id = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
  const int k_tiles = K / kBK;

  // Schedule (SK_TAIL: see the header; CLUSTER_M == 1 there, so a unit is a tile and a cluster a block).
  // SK_TAIL 1: the last full wave and the remainder, over every block; SK_TAIL 2: the remainder
  // only, over at most 2 blocks per tile, so that every range holds >= k_tiles / 2 k-tiles.
  int dp_units = units, sk_iters = 0, sk_blocks = clusters;
  if (SK_TAIL) {
    const int waves = units / clusters, rem = units % clusters;
    if (SK_TAIL == 1 && waves >= 1 && rem != 0) {
      dp_units = (waves - 1) * clusters;
      sk_iters = (units - dp_units) * k_tiles;
    }
    if (SK_TAIL == 2 && rem != 0) {
      dp_units = waves * clusters;
      sk_iters = rem * k_tiles;
      sk_blocks = min(clusters, rem * min(2, k_tiles));
    }
  }
  const TileWalk walk0 = {cluster_id, dp_units, clusters, sk_start(cluster_id, sk_iters, sk_blocks),
                          sk_start(cluster_id + 1, sk_iters, sk_blocks), dp_units, k_tiles};

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&full[s], 1);               // the producer's arrive.expect_tx; the bytes come from TMA
      fk::mbar_init(&empty[s], 2 * CLUSTER_M);  // both consumers of every block of the cluster
    }
    fk::fence_barrier_init();
  }
  // No block may arrive on, or multicast into, a peer whose barriers are not initialised yet.
  if (CLUSTER_M > 1) fk::cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---------------- producer: one thread streams k-tiles of every tile into the ring ----------
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    if (tid == 0) {
      int s = 0;
      unsigned phase = 0;
      TileWalk walk = walk0;
      int u, kb, ke;
      while (walk.next(&u, &kb, &ke)) {
        int m0, n0;
        unit_tile(u, units_m, units_n, rank, &m0, &n0);
        for (int kt = kb; kt < ke; ++kt) {
          // The slot's previous fill must have been released by the consumers of every block that
          // it is multicast into; the first pass over the ring is free.
          fk::mbar_wait(&empty[s], phase ^ 1);
          fk::mbar_arrive_expect_tx(&full[s], kBigABytes + kBigBBytes);  // own A + all B panels
          fk::tma_load_2d(sA + s * kBigABytes, tmA, &full[s], kt * kBK, m0);  // A[m0 : m0+BM, k : k+64]
#pragma unroll
          for (int p = 0; p < BN / 64; ++p) {  // B[k : k+64, n0+64p : n0+64p+64]
            unsigned char* dst = sB + s * kBigBBytes + p * kPanelBytes;
            if (CLUSTER_M == 1) fk::tma_load_2d(dst, tmB, &full[s], n0 + p * 64, kt * kBK);
            else if (p % CLUSTER_M == (int)rank)
              fk::tma_load_2d_multicast(dst, tmB, &full[s], n0 + p * 64, kt * kBK, (1u << CLUSTER_M) - 1);
          }
          if (++s == STAGES) { s = 0; phase ^= 1; }
        }
      }
    }
  } else {
    // ---------------- consumers: both warpgroups on one tile, BM/2 rows each -------------------
    fk::warpgroup_reg_alloc<kConsumerRegs>();
    const int c = wg - 1;
    const int lt = tid % 128, warp = lt / 32, lane = lt % 32;
    unsigned char* const stage = sStage + c * kStagingBytes;

    // With a cluster the peer's producer multicasts into our slot too, so its empty barrier must
    // hear from us as well.
    auto release_slot = [&](int slot) {
      if (lt != 0) return;
      if (CLUSTER_M == 1) fk::mbar_arrive(&empty[slot]);
      else
        for (unsigned cta = 0; cta < CLUSTER_M; ++cta) fk::mbar_arrive_cluster(&empty[slot], cta);
    };

    // Stream-K partial of (block b, consumer c): [kBigMI][BN/8][128 threads] float4, i.e. this
    // consumer's accumulator fragment, 4 floats per thread per store, a warp writing 512 B at once.
    constexpr int kPartF4 = kBigMI * (BN / 8) * 128;  // float4 per consumer slot
    auto part_slot = [&](int b) { return reinterpret_cast<float4*>(sk_part) + (size_t)(2 * b + c) * kPartF4; };

    // STAGGER > 0: consumer 1 starts its first k-tile only once consumer 0 has issued STAGGER
    // k-tiles, and the lag then persists (the consumers share no other barrier), so one consumer's
    // epilogue runs while the other still issues wgmmas instead of both leaving the tensor cores
    // idle at once. The ring bounds the lag: STAGGER < STAGES (manifest). Measured on H200
    // (third session, STAGES 4, GROUP_M 16): 4096^3 0.993x / 0.994x / 0.992x of cuBLAS for
    // STAGGER 0 / 1 / 2, i.e. no effect, so the domain is pinned to 0: the 4096^3 gap is not
    // the epilogues coinciding.
    constexpr int kStaggerBar = 5;
    bool staggered = STAGGER == 0;

    int s = 0;
    unsigned phase = 0;
    TileWalk walk = walk0;
    int u, kb, ke;
    while (walk.next(&u, &kb, &ke)) {
      int m0, n0;
      unit_tile(u, units_m, units_n, rank, &m0, &n0);
      const int row0 = m0 + c * kBigRows;  // first row of C this consumer owns

      float acc[kBigMI][BN / 2];  // [64-row slice][fragment of a 64 x BN wgmma]
#pragma unroll
      for (int mi = 0; mi < kBigMI; ++mi)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.0f;

      int prev = 0;
      for (int kt = kb; kt < ke; ++kt) {
        if (!staggered && c == 1) {
          fk::named_barrier_sync(kStaggerBar, 256);  // consumer 0 is STAGGER k-tiles ahead
          staggered = true;
        }
        fk::mbar_wait(&full[s], phase);  // this fill of slot s has landed
        const unsigned char* a = sA + s * kBigABytes + c * kBigRows * 128;  // [BM/2][64] of this consumer
        const unsigned char* b = sB + s * kBigBBytes;                       // [BN/64][64][64]
        fk::wgmma_fence();
#pragma unroll
        for (int k16 = 0; k16 < kBK / 16; ++k16)  // A: 16 k = 32 B along a row; B: 16 k rows = 2048 B
#pragma unroll
          for (int mi = 0; mi < kBigMI; ++mi)
            fk::wgmma_m64k16_bf16<BN>(acc[mi], fk::wgmma_desc_kmajor_128b(a + mi * 64 * 128 + k16 * 32),
                                      fk::wgmma_desc_nmajor_128b(b + k16 * 16 * 128, kPanelBytes));
        fk::wgmma_commit();
        // Keep this k-tile's wgmmas in flight; the previous k-tile's are done, so its slot is free.
        fk::wgmma_wait<1>();
        if (kt > kb) release_slot(prev);
        prev = s;
        if (++s == STAGES) { s = 0; phase ^= 1; }
        if (!staggered && c == 0 && (kt - kb + 1 == STAGGER || kt + 1 == ke)) {
          fk::named_barrier_arrive(kStaggerBar, 256);  // let consumer 1 start
          staggered = true;
        }
      }
      fk::wgmma_wait<0>();
      release_slot(prev);  // the producer may already be filling the ring for the next tile

      if (SK_TAIL && kb > 0) {
        // Stream-K, not the tile's first k-tiles: park the partial for the owner of k-tile 0 and
        // flag it; no epilogue here.
        float4* dst = part_slot(cluster_id);
#pragma unroll
        for (int mi = 0; mi < kBigMI; ++mi)
#pragma unroll
          for (int q = 0; q < BN / 8; ++q)
            __stcg(dst + (mi * (BN / 8) + q) * 128 + lt,
                   make_float4(acc[mi][4 * q], acc[mi][4 * q + 1], acc[mi][4 * q + 2], acc[mi][4 * q + 3]));
        __threadfence();
        fk::named_barrier_sync(1 + c, 128);  // every thread's part is written (and fenced)
        if (lt == 0) fk::st_release_gpu(&sk_flag[2 * cluster_id + c], 1);
        continue;
      }
      if (SK_TAIL && ke < k_tiles) {
        // Stream-K, we own k-tile 0 but the tile goes on in the next block(s): add their partials.
        const int tile_end = (u - dp_units + 1) * k_tiles;  // end of this tile's iterations
        for (int b = cluster_id + 1; b < sk_blocks && sk_start(b, sk_iters, sk_blocks) < tile_end; ++b) {
          if (lt == 0) {
            while (fk::ld_acquire_gpu(&sk_flag[2 * b + c]) != 1) {
            }
            // Back to 0 for the next launch. The harness zeroes the flags before every launch anyway;
            // this only makes the kernel self-cleaning where a workspace is not re-zeroed.
            sk_flag[2 * b + c] = 0;
          }
          __syncwarp();
          fk::named_barrier_sync(1 + c, 128);  // the flag was seen: the partial is visible to all of us
          const float4* src = part_slot(b);
#pragma unroll
          for (int mi = 0; mi < kBigMI; ++mi)
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) {
              const float4 v = __ldcg(src + (mi * (BN / 8) + q) * 128 + lt);
              acc[mi][4 * q] += v.x;
              acc[mi][4 * q + 1] += v.y;
              acc[mi][4 * q + 2] += v.z;
              acc[mi][4 * q + 3] += v.w;
            }
        }
      }

      if (EPI == 0) {
        // Straight to global: each warp writes 8 rows x 16 B per store instruction.
#pragma unroll
        for (int mi = 0; mi < kBigMI; ++mi)
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int row = row0 + mi * 64 + warp * 16 + lane / 4 + 8 * h;
              const int col = n0 + j * 8 + 2 * (lane % 4);
              if (row < M)
                *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
                    __floats2bfloat162_rn(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
            }
      } else {
        // Through shared staging and TMA stores, 64 rows x 64*kEpiPanels columns per round. Staging panel
        // [64 rows][64 n] bf16 with the 128-byte swizzle: (r, n) lives at r*128 + ((n/8) ^ (r%8))*16
        // + (n%8)*2. A warp's 32 bf16x2 writes cover 8 rows (r%8 = lane/4) x one 16 B chunk each,
        // so they hit 32 different banks.
#pragma unroll
        for (int mi = 0; mi < kBigMI; ++mi)
#pragma unroll
          for (int part = 0; part < BN / 64 / kEpiPanels; ++part) {
            if (lt == 0) fk::bulk_wait_read<0>();  // the previous round's stores have read the staging
            fk::named_barrier_sync(1 + c, 128);
#pragma unroll
            for (int jj = 0; jj < 8 * kEpiPanels; ++jj)  // 8-column group jj of this round's columns
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int j = part * 8 * kEpiPanels + jj;
                const int r = warp * 16 + lane / 4 + 8 * h;
                unsigned char* dst = stage + (jj / 8) * kPanelBytes + r * 128 + (((jj % 8) ^ (lane / 4)) * 16) +
                                     4 * (lane % 4);
                *reinterpret_cast<__nv_bfloat162*>(dst) =
                    __floats2bfloat162_rn(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
              }
            fk::fence_proxy_async_smem();  // make the generic writes visible to the TMA engine
            fk::named_barrier_sync(1 + c, 128);
            if (lt == 0) {
              const int row = row0 + mi * 64, col = n0 + part * 64 * kEpiPanels;
#pragma unroll
              for (int p = 0; p < kEpiPanels; ++p)  // C[row : row+64, col+64p : col+64p+64]
                fk::tma_store_2d(tmC, stage + p * kPanelBytes, col + 64 * p, row);
              fk::bulk_commit();
            }
          }
      }
    }
    if (EPI != 0 && lt == 0) fk::bulk_wait<0>();  // the staging must outlive the last stores
  }

  // A block must outlive the peer's last arrivals on its empty barriers and multicasts into it.
  if (CLUSTER_M > 1) {
    __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
    fk::cluster_sync();
  }
}

// ================================ skinny path: split-K over a cluster ===========================

// Cluster layout (cluster_x = split_k * S_CA blocks, 1-D): rank = colj * split_k + kq. The split_k
// blocks with the same colj share one 64 x SBN column tile of C and sum their K-slices through
// distributed shared memory; the S_CA blocks with the same kq read the same K-slice of A, so each
// loads 64/S_CA rows of every A box and multicasts them to the others.
__device__ __forceinline__ void skinny_path(const CUtensorMap* tmA, const CUtensorMap* tmB,
                                            __nv_bfloat16* __restrict__ C, int M, int N, int K, int split_k,
                                            unsigned char* base, u64* full, u64* empty)
{
  unsigned char* const sA = base;                             // [S_STAGES][S_BK/64][64][64] bf16
  unsigned char* const sB = base + S_STAGES * kSkABytes;      // [S_STAGES][SBN/64][S_BK][64] bf16
  float* const red = reinterpret_cast<float*>(base);          // after the mainloop: [64][kRedPitch] fp32

  const int tid = threadIdx.x;
  const int wg = tid / 128;
  const unsigned rank = fk::cluster_ctarank();
  const int cluster_size = split_k * S_CA;
  const int kq = (int)rank % split_k;                          // which K-slice this block sums
  const int colj = (int)rank / split_k;                        // which column tile of the cluster
  const int n0 = ((int)blockIdx.x / cluster_size * S_CA + colj) * SBN;  // C[0:64, n0 : n0+SBN]
  const int kt_count = K / S_BK / split_k;                     // ring slots of this block

  if (tid == 0) {
    if (S_LEAN) {
      fk::prefetch_tensormap(tmA);
      fk::prefetch_tensormap(tmB);
    }
    for (int s = 0; s < S_STAGES; ++s) {
      fk::mbar_init(&full[s], 1);
      fk::mbar_init(&empty[s], S_CONS * S_CA);  // every consumer of every block our A multicast reaches
    }
    fk::fence_barrier_init();
  }
  // With A multicast, peers write into our ring and arrive on our barriers: they must be initialised.
  if (S_CA > 1) fk::cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---------------- producer ----------------
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    if (tid == 0) {
      u64 pol_a = 0, pol_b = 0;
      if (S_HINT) { pol_a = fk::policy_evict_last(); pol_b = fk::policy_evict_first(); }
      unsigned short a_mask = 0;
      for (int j = 0; j < S_CA; ++j) a_mask |= (unsigned short)(1u << (kq + split_k * j));
      int s = 0;
      unsigned phase = 0;
      for (int i = 0; i < kt_count; ++i) {
        const int k0 = (S_KINT ? i * split_k + kq : kq * kt_count + i) * S_BK;
        fk::mbar_wait(&empty[s], phase ^ 1);
        fk::mbar_arrive_expect_tx(&full[s], kSkABytes + kSkBBytes);
#pragma unroll
        for (int kb = 0; kb < S_BK / 64; ++kb) {  // A[r0 : r0+64/S_CA, k0+64kb : k0+64kb+64]
          unsigned char* dst = sA + s * kSkABytes + kb * kPanelBytes + colj * kSkARows * 128;
          const int col = k0 + kb * 64, row = colj * kSkARows;
          if (S_CA == 1) {
            if (S_HINT) fk::tma_load_2d_hint(dst, tmA, &full[s], col, row, pol_a);
            else fk::tma_load_2d(dst, tmA, &full[s], col, row);
          } else {
            if (S_HINT) fk::tma_load_2d_multicast_hint(dst, tmA, &full[s], col, row, a_mask, pol_a);
            else fk::tma_load_2d_multicast(dst, tmA, &full[s], col, row, a_mask);
          }
        }
#pragma unroll
        for (int p = 0; p < SBN / 64; ++p) {  // B[k0 : k0+S_BK, n0+64p : n0+64p+64]
          unsigned char* dst = sB + s * kSkBBytes + p * kSkPanel;
          if (S_HINT) fk::tma_load_2d_hint(dst, tmB, &full[s], n0 + p * 64, k0, pol_b);
          else fk::tma_load_2d(dst, tmB, &full[s], n0 + p * 64, k0);
        }
        if (++s == S_STAGES) { s = 0; phase ^= 1; }
      }
    }
    __syncwarp();
    if (split_k > 1 || !S_LEAN) {
      fk::cluster_sync();  // partials parked
      fk::cluster_sync();  // partials consumed: peers no longer read our shared memory
    } else if (S_CA > 1) {
      fk::cluster_sync();  // peers no longer arrive on our barriers
    }
  } else {
    // ---------------- consumers: 64 rows x SBN/S_CONS columns each ----------------
    fk::warpgroup_reg_alloc<kConsumerRegs>();
    const int c = wg - 1;
    const int lt = tid % 128, warp = lt / 32, lane = lt % 32;

    // The slot is also filled by the A multicasts of our peers: release it to all of them.
    auto release_slot = [&](int slot) {
      if (lt != 0) return;
      if (S_CA == 1) fk::mbar_arrive(&empty[slot]);
      else
        for (int j = 0; j < S_CA; ++j) fk::mbar_arrive_cluster(&empty[slot], (unsigned)(kq + split_k * j));
    };

    float acc[kSkCols / 2];  // fragment of a 64 x kSkCols wgmma
#pragma unroll
    for (int i = 0; i < kSkCols / 2; ++i) acc[i] = 0.0f;

    int s = 0, prev = 0;
    unsigned phase = 0;
    for (int i = 0; i < kt_count; ++i) {
      fk::mbar_wait(&full[s], phase);
      const unsigned char* a = sA + s * kSkABytes;                                // [S_BK/64][64][64]
      const unsigned char* b = sB + s * kSkBBytes + c * (kSkCols / 64) * kSkPanel;  // our panels
      // Descriptors of the slot's first k16 step; later steps add their byte offset / 16 to the
      // start-address field (no carry: every address stays below 256 KiB).
      const u64 da = fk::wgmma_desc_kmajor_128b(a), db = fk::wgmma_desc(b, kSkPanel, 1024);
      fk::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < S_BK / 16; ++kk)  // A: box kk/4, 32 B per k16; B: 16 k rows = 2048 B
        fk::wgmma_m64k16_bf16<kSkCols>(acc, da + (u64)(((kk / 4) * kPanelBytes + (kk % 4) * 32) >> 4),
                                       db + (u64)((kk * 2048) >> 4));
      fk::wgmma_commit();
      fk::wgmma_wait<1>();
      if (i > 0) release_slot(prev);
      prev = s;
      if (++s == S_STAGES) { s = 0; phase ^= 1; }
    }
    fk::wgmma_wait<0>();
    if (S_LEAN && split_k == 1) {
      // No K split: straight from the accumulators to C (bf16x2 stores, 8 rows x 16 B per warp
      // store instruction).
#pragma unroll
      for (int j = 0; j < kSkCols / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = warp * 16 + lane / 4 + 8 * h;
          const int col = n0 + c * kSkCols + j * 8 + 2 * (lane % 4);
          if (r < M)
            *reinterpret_cast<__nv_bfloat162*>(C + (size_t)r * N + col) =
                __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        }
      if (S_CA > 1) {
        __syncwarp();
        fk::cluster_sync();  // no block exits while a peer may still arrive on its barriers
      }
      return;
    }
    // Every fill has landed (ours and the peers' multicasts into us) and every consumer has finished
    // reading the ring: reuse it for the fp32 partial [64][kRedPitch].
    fk::fence_proxy_async_smem();
    fk::named_barrier_sync(3, 128 * S_CONS);
#pragma unroll
    for (int j = 0; j < kSkCols / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warp * 16 + lane / 4 + 8 * h;
        const int col = c * kSkCols + j * 8 + 2 * (lane % 4);
        *reinterpret_cast<float2*>(red + r * kRedPitch + col) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      }
    fk::cluster_sync();  // every block's partial is complete and visible cluster-wide

    // Block kq sums rows [kq*rows, (kq+1)*rows) of its column tile over the split_k partials; a
    // thread takes 4 adjacent columns at a time (16 B from each peer, 8 B of bf16 to C).
    const int rows = 64 / split_k;
    const int groups = rows * (SBN / 4);
    for (int g = tid - 128; g < groups; g += 128 * S_CONS) {
      const int r = kq * rows + g / (SBN / 4);
      const int c4 = (g % (SBN / 4)) * 4;
      const float* src = red + r * kRedPitch + c4;
      // Issue every peer's load before the first add, so their latencies overlap.
      float4 v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q < split_k) v[q] = fk::ld_dsmem_f4(src, (unsigned)(colj * split_k + q));
      float4 sum = v[0];
#pragma unroll
      for (int q = 1; q < 8; ++q)
        if (q < split_k) { sum.x += v[q].x; sum.y += v[q].y; sum.z += v[q].z; sum.w += v[q].w; }
      if (r < M) {
        __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x, sum.y), hi = __floats2bfloat162_rn(sum.z, sum.w);
        uint2 packed;
        packed.x = *reinterpret_cast<unsigned*>(&lo);
        packed.y = *reinterpret_cast<unsigned*>(&hi);
        *reinterpret_cast<uint2*>(C + (size_t)r * N + n0 + c4) = packed;
      }
    }
    __syncwarp();
    fk::cluster_sync();  // no block exits while a peer may still read its partial or arrive on its barriers
  }
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_persistent(const __grid_constant__ CUtensorMap tmA,    // A [M, K], box a_rows x 64
                      const __grid_constant__ CUtensorMap tmB,    // B [K, N], box 64 x 64
                      const __grid_constant__ CUtensorMap tmA_p,  // the same with 256 B L2 promotion
                      const __grid_constant__ CUtensorMap tmB_p,
                      const __grid_constant__ CUtensorMap tmC,  // C [M, N], box 64 x 64 (EPI > 0)
                      __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                      int M, int N, int K, int skinny, int split_k,
                      float* __restrict__ sk_part,  // SK_TAIL: [blocks][2 consumers] stream-K partials, fp32
                      unsigned* sk_flag)            // SK_TAIL: [blocks][2 consumers] "partial ready", zeroed
{
  extern __shared__ unsigned char smem_raw[];
  // mbarriers first; the data after them 1024-aligned (the 128-byte swizzle repeats every 1024 B
  // and wgmma assumes atoms start 1024-aligned). The offset is the same in every block of a cluster,
  // as multicast and distributed shared memory require.
  u64* const full = reinterpret_cast<u64*>(smem_raw);
  u64* const empty = full + kMaxStages;
  unsigned char* const base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<u64>(smem_raw) + kBarrierBytes + 1023) & ~1023ull);
  const bool promote = skinny ? S_L2P : L2P;
  const CUtensorMap* const mapA = promote ? &tmA_p : &tmA;
  const CUtensorMap* const mapB = promote ? &tmB_p : &tmB;
  if (skinny) skinny_path(mapA, mapB, C, M, N, K, split_k, base, full, empty);
  else big_path(mapA, mapB, &tmC, C, M, N, K, base, full, empty, sk_part, sk_flag);
}
