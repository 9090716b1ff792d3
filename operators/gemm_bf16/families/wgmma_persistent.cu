/* forgek
{
  "name": "gemm_wgmma_persistent",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "persistent_grid", "thread_block_cluster", "split_k", "cluster_dsmem"],
  "controls": {"mbarrier_pipeline": ["STAGES", "S_STAGES"], "raster": ["GROUP_M"], "tma_store": ["EPI"],
               "split_k": ["SBN"], "k_step": ["S_BK"], "warp_specialization": ["S_CONS"],
               "cache_hint": ["S_HINT"]},
  "params": {"STAGES": [3, 4], "GROUP_M": [8, 16], "EPI": [1, 2],
             "SBN": [64, 128], "S_STAGES": [6, 8], "S_BK": [64, 128], "S_CONS": [1, 2], "S_HINT": [0, 1]},
  "let": {
    "skinny": "M <= 64",
    "units": "ceil_div(M, 128) * (N / 256)",
    "staging": "(EPI == 1)*2*16384 + (EPI == 2)*2*256*128",
    "smem_tiles": "STAGES*(128 + 256)*128 + staging + 2048",
    "split_k": "min(8, pow2(log2(max(1, 128 / max(1, N / SBN)))))",
    "sk_slot": "(64 + SBN)*S_BK*2",
    "smem_skinny": "S_STAGES*sk_slot + 2048",
    "a_rows": "skinny*64 + (1 - skinny)*128",
    "b_rows": "skinny*S_BK + (1 - skinny)*64"
  },
  "constraints": ["smem_tiles <= 232448",
                  "smem_skinny <= 232448",
                  "64*(SBN + 8)*4 <= S_STAGES*sk_slot",
                  "S_CONS == 1 || SBN >= 128", "SBN / S_CONS < 256 || S_BK <= 128",
                  "K % 64 == 0",
                  "skinny || N % 256 == 0",
                  "!skinny || (N % SBN == 0 && K % (S_BK*split_k) == 0)"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["a_rows", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["b_rows", "64"], "swizzle": "128B"},
    {"name": "tmC", "tensor": "C", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_wgmma_persistent", "when": "!skinny",
     "grid": ["min(units, num_sms)"], "block": [384], "smem": "smem_tiles",
     "args": ["tmA", "tmB", "tmC", "M", "N", "K"]},
    {"kernel": "gemm_wgmma_splitk_skinny", "when": "skinny",
     "grid": ["(N / SBN)*split_k"], "block": ["128 + 128*S_CONS"], "cluster": ["split_k", 1, 1],
     "smem": "smem_skinny",
     "args": ["tmA", "tmB", "C", "M", "N", "K", "split_k"]}
  ]
}
*/
// Hopper GEMM C[M,N] = A[M,K] · B[K,N] (bf16 in, fp32 accumulate, bf16 out): two kernels, one per
// regime, picked by the manifest (`skinny` = M <= 64). Measurements, and the ideas tried and left
// out of this file (stream-K tails, staggered consumers, 2-block clusters, L2 promotion, A multicast),
// are in ../README.md.
//
// gemm_wgmma_persistent (M > 64): persistent and warp-specialised, 128 x 256 tiles.
//   The grid holds one block per SM of the device it runs on (num_sms, which forgek binds to the
//   device's count: 132 on H100 SXM and H200); block b walks tiles b, b + grid, ... of a grouped raster
//   (GROUP_M tile-rows at a time, column-major inside a group, so the blocks resident
//   together share A row-panels and B column-panels in L2). Warpgroup 0 is the producer
//   (setmaxnreg.dec): one thread issues the TMA loads of every k-tile of every tile of its block into
//   a STAGES-deep ring, running ahead across tile boundaries, so the ring is already full when the
//   consumers start the next tile (no pipeline fill per tile). Warpgroups 1 and 2 are consumers
//   (setmaxnreg.inc) cooperating on one tile: consumer c owns rows [64c, 64c + 64) and all 256
//   columns. Epilogue (EPI): registers -> 128B-swizzled shared staging -> TMA store (asynchronous:
//   the consumer goes on with the next tile while the copy engine writes C), in rounds of
//   64 rows x 128 columns (EPI 1, 16 KiB of staging per consumer) or 64 rows x 256 columns (EPI 2,
//   more shared memory, so fewer STAGES fit). Rows of C past M are clipped by the TMA store.
//
// gemm_wgmma_splitk_skinny (M <= 64, e.g. 64 x 8192 x 8192: bound by streaming B once from DRAM):
//   N/SBN column tiles x split_k K-slices give ~128 blocks (split_k a power of two <= 8), so that
//   many SMs stream B, each reading SBN*2 contiguous bytes per row of B. The split_k blocks of one
//   column tile form a cluster and sum their partials through distributed shared memory. A block
//   has 1 producer warpgroup and S_CONS consumer warpgroups; consumer c owns SBN/S_CONS columns. A
//   ring slot holds S_BK k: B arrives as SBN/64 boxes of S_BK x 64, A as S_BK/64 boxes of 64 x 64.
//   Each block computes a 64 x SBN fp32 partial over its K-slice, parks it in its own shared
//   memory, and after a cluster barrier block r sums rows [r*64/split_k, (r+1)*64/split_k) of all
//   split_k partials and writes them to C as bf16. No workspace, no second launch.
//   S_HINT = 1: B loads carry an L2 evict_first policy (B is read once), A loads evict_last (45.9 ->
//   41.4 us at 64 x 8192 x 8192 on H200).
//
// Shared-memory layout (after 256 B of mbarriers; data 1024-aligned for the 128-byte swizzle):
//   tile ring slot:    A [128][64 k]               K-major, one 128 B row per m (box 128 x 64 of tmA)
//                      B [4][64 k][64 n]           N-major, one 128 B row per k (64 x 64 boxes of tmB);
//                                                  wgmma reads B transposed (tnsp-b = 1)
//   skinny ring slot:  A [S_BK/64][64][64 k]       (boxes 64 x 64 of tmA)
//                      B [SBN/64][S_BK k][64 n]    (boxes S_BK x 64 of tmB; wgmma LBO = S_BK*128)
//   tiles, after the ring: 2 consumers x kEpiPanels staging panels [64 rows][64 n] bf16
//   skinny, after the mainloop: the ring is reused for the fp32 partial [64][SBN + 8].
// Rows of A past M are zero-filled by TMA; rows of C past M are never written.
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

typedef unsigned long long u64;

constexpr int kBM = 128, kBN = 256;            // tile of gemm_wgmma_persistent
constexpr int kBK = 64;                        // k per ring slot: one 128 B swizzle row of bf16
constexpr int kPanelBytes = 64 * kBK * 2;      // one 64 x 64 bf16 box: 8 KiB
constexpr int kMaxStages = 8;                  // barrier slots reserved (full + empty)
constexpr int kBarrierBytes = 256;             // 2 * kMaxStages mbarriers of 8 B, padded
constexpr unsigned kProducerRegs = 40;         // 128*40 + 256*232 <= 65536 registers of the SM
constexpr unsigned kConsumerRegs = 232;

// gemm_wgmma_persistent: per ring slot A [kBM][64] and B [kBN/64][64][64]; a consumer owns kBM/2 rows.
constexpr int kTileABytes = kBM * kBK * 2;
constexpr int kTileBBytes = kBN * kBK * 2;
constexpr int kConsumerRows = kBM / 2;
constexpr int kEpiPanels = EPI == 2 ? kBN / 64 : 2;      // 64-column panels per epilogue round
constexpr int kStagingBytes = kEpiPanels * kPanelBytes;  // per consumer: [kEpiPanels][64 rows][64 n] bf16

// gemm_wgmma_splitk_skinny: per ring slot (S_BK k) A [S_BK/64][64][64] and B [SBN/64][S_BK][64];
// consumer c of S_CONS owns SBN/S_CONS columns.
constexpr int kSkABytes = 64 * S_BK * 2;
constexpr int kSkBBytes = SBN * S_BK * 2;
constexpr int kSkPanel = S_BK * 128;           // one B panel [S_BK k][64 n]: the wgmma LBO
constexpr int kSkCols = SBN / S_CONS;
constexpr int kRedPitch = SBN + 8;             // floats per row of the fp32 partial (bank spread)

static_assert(STAGES <= kMaxStages && S_STAGES <= kMaxStages, "barrier slots");
static_assert(64 * kRedPitch * 4 <= S_STAGES * (kSkABytes + kSkBBytes), "partial must fit in the ring");
static_assert(kSkCols == 64 || kSkCols == 128 || kSkCols == 256, "consumer wgmma width");

// wgmma accumulator fragment of a 64-row slice: float i of thread (warp w of the warpgroup, lane l)
// is D[16w + l/4 + 8*((i/2)%2)][8*(i/4) + 2*(l%4) + i%2]; floats 4j+2h, 4j+2h+1 are two adjacent
// columns of row 16w + l/4 + 8h.

// The mbarriers first; the data after them 1024-aligned (the 128-byte swizzle repeats every 1024 B
// and wgmma assumes atoms start 1024-aligned). The offset is the same in every block of a cluster,
// as distributed shared memory requires.
struct SharedLayout {
  u64* full;            // full[s]: slot s loaded
  u64* empty;           // empty[s]: slot s released
  unsigned char* base;  // the ring
};
__device__ __forceinline__ SharedLayout shared_layout(unsigned char* smem_raw)
{
  u64* const full = reinterpret_cast<u64*>(smem_raw);
  return {full, full + kMaxStages,
          reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(smem_raw) + kBarrierBytes + 1023) & ~1023ull)};
}

// ================================ M > 64: persistent, warp-specialised ==========================

// Tile index -> top-left corner. Tiles form a grid of tiles_m x (N / kBN); they are walked GROUP_M
// tile-rows at a time, column-major inside a group.
__device__ __forceinline__ void tile_corner(int t, int tiles_m, int tiles_n, int* m0, int* n0)
{
  const int per_group = GROUP_M * tiles_n;
  const int first = (t / per_group) * GROUP_M;
  const int rows = min(tiles_m - first, GROUP_M);
  const int in_group = t % per_group;
  *m0 = (first + in_group % rows) * kBM;
  *n0 = (in_group / rows) * kBN;
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_persistent(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box 128 x 64
                      const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
                      const __grid_constant__ CUtensorMap tmC,  // C [M, N], box 64 x 64
                      int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  const SharedLayout sh = shared_layout(smem_raw);
  unsigned char* const sA = sh.base;                          // [STAGES][kBM][64] bf16
  unsigned char* const sB = sh.base + STAGES * kTileABytes;   // [STAGES][kBN/64][64][64] bf16
  unsigned char* const sStage = sB + STAGES * kTileBBytes;    // [2 consumers][kEpiPanels][64][64] bf16

  const int tid = threadIdx.x;
  const int wg = tid / 128;  // 0: producer, 1 and 2: consumers
  const int tiles_m = (M + kBM - 1) / kBM, tiles_n = N / kBN, tiles = tiles_m * tiles_n;
  const int k_tiles = K / kBK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&sh.full[s], 1);   // the producer's arrive.expect_tx; the bytes come from TMA
      fk::mbar_init(&sh.empty[s], 2);  // both consumers
    }
    fk::fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ---------------- producer: one thread streams k-tiles of every tile into the ring ----------
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    if (tid == 0) {
      int s = 0;
      unsigned phase = 0;
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int m0, n0;
        tile_corner(t, tiles_m, tiles_n, &m0, &n0);
        for (int kt = 0; kt < k_tiles; ++kt) {
          fk::mbar_wait(&sh.empty[s], phase ^ 1);  // released by both consumers; the first pass is free
          fk::mbar_arrive_expect_tx(&sh.full[s], kTileABytes + kTileBBytes);
          fk::tma_load_2d(sA + s * kTileABytes, &tmA, &sh.full[s], kt * kBK, m0);  // A[m0 : m0+128, k : k+64]
#pragma unroll
          for (int p = 0; p < kBN / 64; ++p)  // B[k : k+64, n0+64p : n0+64p+64]
            fk::tma_load_2d(sB + s * kTileBBytes + p * kPanelBytes, &tmB, &sh.full[s], n0 + p * 64, kt * kBK);
          if (++s == STAGES) { s = 0; phase ^= 1; }
        }
      }
    }
  } else {
    // ---------------- consumers: both warpgroups on one tile, 64 rows each ---------------------
    fk::warpgroup_reg_alloc<kConsumerRegs>();
    const int c = wg - 1;
    const int lt = tid % 128, warp = lt / 32, lane = lt % 32;
    unsigned char* const stage = sStage + c * kStagingBytes;

    int s = 0;
    unsigned phase = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int m0, n0;
      tile_corner(t, tiles_m, tiles_n, &m0, &n0);
      const int row0 = m0 + c * kConsumerRows;  // first row of C this consumer owns

      float acc[kBN / 2];  // fragment of a 64 x 256 wgmma
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.0f;

      int prev = 0;
      for (int kt = 0; kt < k_tiles; ++kt) {
        fk::mbar_wait(&sh.full[s], phase);  // this fill of slot s has landed
        const unsigned char* a = sA + s * kTileABytes + c * kConsumerRows * 128;  // [64][64] of this consumer
        const unsigned char* b = sB + s * kTileBBytes;                            // [4][64][64]
        fk::wgmma_fence();
#pragma unroll
        for (int k16 = 0; k16 < kBK / 16; ++k16)  // A: 16 k = 32 B along a row; B: 16 k rows = 2048 B
          fk::wgmma_m64k16_bf16<kBN>(acc, fk::wgmma_desc_kmajor_128b(a + k16 * 32),
                                     fk::wgmma_desc_nmajor_128b(b + k16 * 16 * 128, kPanelBytes));
        fk::wgmma_commit();
        // Keep this k-tile's wgmmas in flight; the previous k-tile's are done, so its slot is free.
        fk::wgmma_wait<1>();
        if (kt > 0 && lt == 0) fk::mbar_arrive(&sh.empty[prev]);
        prev = s;
        if (++s == STAGES) { s = 0; phase ^= 1; }
      }
      fk::wgmma_wait<0>();
      if (lt == 0) fk::mbar_arrive(&sh.empty[prev]);  // the producer may already be filling the next tile

      // Through shared staging and TMA stores, 64 rows x 64*kEpiPanels columns per round. Staging panel
      // [64 rows][64 n] bf16 with the 128-byte swizzle: (r, n) lives at r*128 + ((n/8) ^ (r%8))*16
      // + (n%8)*2. A warp's 32 bf16x2 writes cover 8 rows (r%8 = lane/4) x one 16 B chunk each,
      // so they hit 32 different banks.
#pragma unroll
      for (int part = 0; part < kBN / 64 / kEpiPanels; ++part) {
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
            *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
          }
        fk::fence_proxy_async_smem();  // make the generic writes visible to the TMA engine
        fk::named_barrier_sync(1 + c, 128);
        if (lt == 0) {
          const int col = n0 + part * 64 * kEpiPanels;
#pragma unroll
          for (int p = 0; p < kEpiPanels; ++p)  // C[row0 : row0+64, col+64p : col+64p+64]
            fk::tma_store_2d(&tmC, stage + p * kPanelBytes, col + 64 * p, row0);
          fk::bulk_commit();
        }
      }
    }
    if (lt == 0) fk::bulk_wait<0>();  // the staging must outlive the last stores
  }
}

// ================================ M <= 64: split-K over a cluster ===============================

// Cluster layout (split_k blocks, 1-D): rank kq sums K-slice kq of the cluster's 64 x SBN column
// tile of C.
extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_splitk_skinny(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box 64 x 64
                         const __grid_constant__ CUtensorMap tmB,  // B [K, N], box S_BK x 64
                         __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                         int M, int N, int K, int split_k)
{
  extern __shared__ unsigned char smem_raw[];
  const SharedLayout sh = shared_layout(smem_raw);
  unsigned char* const sA = sh.base;                             // [S_STAGES][S_BK/64][64][64] bf16
  unsigned char* const sB = sh.base + S_STAGES * kSkABytes;      // [S_STAGES][SBN/64][S_BK][64] bf16
  float* const red = reinterpret_cast<float*>(sh.base);          // after the mainloop: [64][kRedPitch] fp32

  const int tid = threadIdx.x;
  const int wg = tid / 128;
  const int kq = (int)fk::cluster_ctarank();                   // which K-slice this block sums
  const int n0 = (int)blockIdx.x / split_k * SBN;              // C[0:64, n0 : n0+SBN]
  const int kt_count = K / S_BK / split_k;                     // ring slots of this block

  if (tid == 0) {
    for (int s = 0; s < S_STAGES; ++s) {
      fk::mbar_init(&sh.full[s], 1);
      fk::mbar_init(&sh.empty[s], S_CONS);  // every consumer
    }
    fk::fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ---------------- producer ----------------
    fk::warpgroup_reg_dealloc<kProducerRegs>();
    if (tid == 0) {
      u64 pol_a = 0, pol_b = 0;
      if (S_HINT) { pol_a = fk::policy_evict_last(); pol_b = fk::policy_evict_first(); }
      int s = 0;
      unsigned phase = 0;
      for (int i = 0; i < kt_count; ++i) {
        const int k0 = (kq * kt_count + i) * S_BK;  // this block's K-slice is contiguous
        fk::mbar_wait(&sh.empty[s], phase ^ 1);
        fk::mbar_arrive_expect_tx(&sh.full[s], kSkABytes + kSkBBytes);
#pragma unroll
        for (int kb = 0; kb < S_BK / 64; ++kb) {  // A[0 : 64, k0+64kb : k0+64kb+64]
          unsigned char* dst = sA + s * kSkABytes + kb * kPanelBytes;
          if (S_HINT) fk::tma_load_2d_hint(dst, &tmA, &sh.full[s], k0 + kb * 64, 0, pol_a);
          else fk::tma_load_2d(dst, &tmA, &sh.full[s], k0 + kb * 64, 0);
        }
#pragma unroll
        for (int p = 0; p < SBN / 64; ++p) {  // B[k0 : k0+S_BK, n0+64p : n0+64p+64]
          unsigned char* dst = sB + s * kSkBBytes + p * kSkPanel;
          if (S_HINT) fk::tma_load_2d_hint(dst, &tmB, &sh.full[s], n0 + p * 64, k0, pol_b);
          else fk::tma_load_2d(dst, &tmB, &sh.full[s], n0 + p * 64, k0);
        }
        if (++s == S_STAGES) { s = 0; phase ^= 1; }
      }
    }
    __syncwarp();
    fk::cluster_sync();  // partials parked
    fk::cluster_sync();  // partials consumed: peers no longer read our shared memory
  } else {
    // ---------------- consumers: 64 rows x SBN/S_CONS columns each ----------------
    fk::warpgroup_reg_alloc<kConsumerRegs>();
    const int c = wg - 1;
    const int lt = tid % 128, warp = lt / 32, lane = lt % 32;

    float acc[kSkCols / 2];  // fragment of a 64 x kSkCols wgmma
#pragma unroll
    for (int i = 0; i < kSkCols / 2; ++i) acc[i] = 0.0f;

    int s = 0, prev = 0;
    unsigned phase = 0;
    for (int i = 0; i < kt_count; ++i) {
      fk::mbar_wait(&sh.full[s], phase);
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
      if (i > 0 && lt == 0) fk::mbar_arrive(&sh.empty[prev]);
      prev = s;
      if (++s == S_STAGES) { s = 0; phase ^= 1; }
    }
    fk::wgmma_wait<0>();
    // Every fill has landed and every consumer has finished reading the ring: reuse it for the fp32
    // partial [64][kRedPitch].
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

    // Block kq sums rows [kq*rows, (kq+1)*rows) of the column tile over the split_k partials; a
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
        if (q < split_k) v[q] = fk::ld_dsmem_f4(src, (unsigned)q);
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
    fk::cluster_sync();  // no block exits while a peer may still read its partial
  }
}
