/* forgek
{
  "name": "gemm_wgmma_tma_ws",
  "archs": ["sm90"],
  "mechanisms": ["tma", "wgmma", "mbarrier_pipeline", "warp_specialization", "setmaxnreg",
                 "thread_block_cluster", "tma_multicast"],
  "controls": {"tile": ["BM", "BN"], "mbarrier_pipeline": ["STAGES"], "tma_multicast": ["CLUSTER_M"],
               "raster": ["GROUP_M"]},
  "params": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": 64, "STAGES": [3, 4, 5, 6],
             "CLUSTER_M": [1, 2], "GROUP_M": [8, 16]},
  "let": {"smem_bytes": "STAGES*(BM + BN)*BK*2 + 2048"},
  "constraints": ["BM * BN <= 128*256",
                  "BM >= 128 || BN >= 128",
                  "smem_bytes <= 232448",
                  "(BN / 64) % CLUSTER_M == 0",
                  "N % BN == 0", "K % BK == 0",
                  "ceil_div(M, BM) % CLUSTER_M == 0"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "BK"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["BK", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "gemm_wgmma_tma_ws",
     "grid": ["ceil_div(M, BM) * (N / BN)"], "block": [384], "cluster": ["CLUSTER_M", 1, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "C", "M", "N", "K"]}
  ]
}
*/
// Warp-specialised Hopper GEMM: C[M,N] = A[M,K] · B[K,N], bf16 in, fp32 accumulate, bf16 out.
//
// Three warpgroups per block. Warpgroup 0 is the producer: it gives most of its registers back
// (setmaxnreg.dec) and one of its threads issues the TMA copies of each k-tile into a STAGES-deep
// ring of shared-memory slots. Warpgroups 1 and 2 are consumers: they take the registers
// (setmaxnreg.inc), wait for a slot to be full and multiply it with wgmma; they keep one k-tile of
// wgmmas in flight and mark a slot empty once the wgmmas reading it have retired. Loading and
// multiplying thus run in different warps and never wait on each other's instructions.
//
// Split of the BM x BN tile between the two consumers:
//   BM >= 128: consumer c owns rows [c*BM/2, (c+1)*BM/2) and all BN columns (BM/128 m64 wgmmas);
//   BM == 64 : consumer c owns all 64 rows and columns [c*BN/2, (c+1)*BN/2) (for M = 64).
//
// Clusters (CLUSTER_M = 2): the two blocks of a cluster compute vertically adjacent tiles that need
// the same B tile, so each block loads half of its 64-column B panels and multicasts them into both
// blocks' shared memory; B traffic from L2 halves. A slot may then be refilled only when the
// consumers of both blocks have released it, so every consumer arrives on the empty barrier of
// every block of the cluster.
//
// Shared-memory layout of one slot (TMA writes it with the 128-byte swizzle, wgmma reads it so):
//   A: [BM rows][64 k]              K-major, one 128 B row per m (box BM x 64 of tmA)
//   B: [BN/64 panels][64 k][64 n]   N-major, one 128 B row per k (BN/64 boxes 64 x 64 of tmB);
//      wgmma reads B "transposed" (tnsp-b = 1) so row-major B needs no copy.
// Rows of A past M (M=64 with BM >= 128) are zero-filled by TMA and never stored.
#include <cuda_bf16.h>
#if defined(__CUDACC_RTC__)
// NVRTC cannot include cuda.h (it pulls in stdlib.h). The driver's CUtensorMap is 128 opaque bytes
// aligned to 64, which is all a kernel needs to receive one by value.
typedef struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; } CUtensorMap;
#else
#include <cuda.h>  // CUtensorMap
#endif

#define A_TILE_BYTES (BM * BK * 2)
#define B_PANEL_BYTES (64 * BK * 2)   // 64 columns of B by BK rows
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define CONSUMER_ROWS (BM >= 128 ? BM / 2 : 64)   // rows of the tile one consumer owns
#define CONSUMER_COLS (BM >= 128 ? BN : BN / 2)   // columns of the tile one consumer owns
#define CONSUMER_MI (CONSUMER_ROWS / 64)          // m64 wgmmas per k16 step
#define PRODUCER_REGS 40   // 128*40 + 256*232 <= 65536 registers of the SM
#define CONSUMER_REGS 232

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarrier: the handshake between TMA (which completes bytes) and the threads waiting on them.
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned arrivals)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}
// Make the initialised barriers visible to the async proxy (TMA) and to the rest of the cluster.
__device__ __forceinline__ void fence_barrier_init()
{
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` more bytes the phase must receive before it completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes)
{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar)
{
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Spin until the phase with parity `parity` has completed. A fresh barrier counts as having just
// completed a phase of parity 1, so waiting for parity 1 on it returns at once.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity)
{
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// ---- TMA: a 2-D box of a tensor map copied into shared memory; completion counted on `bar`.
// Coordinates are innermost first (column, row), in elements.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, unsigned long long* bar, int col, int row)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(col), "r"(row), "r"(smem_addr(bar))
      : "memory");
}

// ---- wgmma: a warpgroup (128 threads) multiplies operands that it reads from shared memory through
// 64-bit descriptors: start address, leading- and stride-dimension byte offsets, swizzle mode.
// Both operands here use the 128-byte swizzle that TMA wrote: rows of 128 B, 8-row (1024 B) atoms.
__device__ __forceinline__ unsigned long long smem_descriptor(const void* p, unsigned lbo_bytes, unsigned sbo_bytes)
{
  return (unsigned long long)((smem_addr(p) & 0x3FFFF) >> 4)
       | (unsigned long long)((lbo_bytes >> 4) & 0x3FFF) << 16
       | (unsigned long long)((sbo_bytes >> 4) & 0x3FFF) << 32
       | 1ull << 62;  // 128-byte swizzle
}
// A tile [rows][64] K-major (one 128 B row per m): 8-row groups are 1024 B apart (SBO); the leading
// offset is unused because one k16 slice (32 B) never leaves its 128 B row.
__device__ __forceinline__ unsigned long long desc_a_kmajor(const void* p) { return smem_descriptor(p, 16, 1024); }
// B tile stored as [BN/64 panels][64 k rows][64 n] (N-major): within a panel a k row is 128 B and
// 8 k rows form a 1024 B atom (SBO); the next 64 columns live one panel further on (LBO).
__device__ __forceinline__ unsigned long long desc_b_nmajor(const void* p, unsigned panel_bytes)
{
  return smem_descriptor(p, panel_bytes, 1024);
}
// Order register/shared accesses before the asynchronous wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// ---- clusters
__device__ __forceinline__ unsigned cluster_cta_rank()
{
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster arrives, then waits for all the others.
__device__ __forceinline__ void cluster_sync()
{
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Arrive on the barrier at the same shared-memory offset in block `cta` of the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned long long* bar, unsigned cta)
{
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}
// TMA copy written to the same offset in every block of `cta_mask`, completing bytes on each
// block's barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, unsigned long long* bar,
                                                      int col, int row, unsigned short cta_mask)
{
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(col), "r"(row), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}
template <unsigned REGS>
__device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS)); }
template <unsigned REGS>
__device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS)); }

// D[64x64] += A[64x16] (K-major smem) · B[16x64] (N-major smem, hence tnsp-b = 1);
// the predicate scale-d is true, so the product is added to d.
__device__ __forceinline__ void wgmma_m64n64k16(float d[32], unsigned long long desc_a, unsigned long long desc_b)
{
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// D[64x128] += A[64x16] (K-major smem) · B[16x128] (N-major smem, hence tnsp-b = 1);
// the predicate scale-d is true, so the product is added to d.
__device__ __forceinline__ void wgmma_m64n128k16(float d[64], unsigned long long desc_a, unsigned long long desc_b)
{
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// D[64x256] += A[64x16] (K-major smem) · B[16x256] (N-major smem, hence tnsp-b = 1);
// the predicate scale-d is true, so the product is added to d.
__device__ __forceinline__ void wgmma_m64n256k16(float d[128], unsigned long long desc_a, unsigned long long desc_b)
{
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// One k16 step of a 64-row slice of this consumer's accumulator.
__device__ __forceinline__ void wgmma_k16(float* acc, unsigned long long da, unsigned long long db)
{
  if constexpr (CONSUMER_COLS == 256) wgmma_m64n256k16(acc, da, db);
  else if constexpr (CONSUMER_COLS == 128) wgmma_m64n128k16(acc, da, db);
  else wgmma_m64n64k16(acc, da, db);
}

// Block index -> (tile_m, tile_n), walking GROUP_M tile-rows at a time down a column of tiles, so
// the blocks resident together share a few A row-panels and B column-panels in L2 instead of
// streaming all of B once per tile-row. With GROUP_M and the tile-row count both multiples of
// CLUSTER_M, the blocks of one cluster get vertically adjacent tiles in the same tile column.
__device__ __forceinline__ void tile_of_block(int pid, int tiles_m, int tiles_n, int* tile_m, int* tile_n)
{
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = pid % per_group;
  *tile_m = first_m + in_group % group_rows;
  *tile_n = in_group / group_rows;
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_tma_ws(const __grid_constant__ CUtensorMap tmA,  // A [M, K], box BM x 64
                  const __grid_constant__ CUtensorMap tmB,  // B [K, N], box 64 x 64
                  __nv_bfloat16* __restrict__ C,            // [M, N] row-major
                  int M, int N, int K)
{
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 B and wgmma assumes atoms start 1024-aligned. The
  // offset is the same in every block of a cluster, as multicast requires.
  unsigned char* const base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  unsigned char* const sA = base;                          // STAGES x A tile
  unsigned char* const sB = base + STAGES * A_TILE_BYTES;  // STAGES x B tile
  unsigned long long* const full = reinterpret_cast<unsigned long long*>(sB + STAGES * B_TILE_BYTES);
  unsigned long long* const empty = full + STAGES;  // full[s]: slot s loaded; empty[s]: slot s released

  const int tid = threadIdx.x;
  const int wg = tid / 128;  // 0: producer, 1 and 2: consumers
  const unsigned rank = CLUSTER_M > 1 ? cluster_cta_rank() : 0;

  int tile_m, tile_n;
  tile_of_block(blockIdx.x, (M + BM - 1) / BM, N / BN, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int k_tiles = K / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);               // the producer's arrive.expect_tx; bytes come from TMA
      mbar_init(&empty[s], 2 * CLUSTER_M);  // both consumers of every block of the cluster
    }
    fence_barrier_init();
  }
  // No block may arrive on, or multicast into, a peer whose barriers are not initialised yet.
  if (CLUSTER_M > 1) cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---------------- producer ----------------
    setmaxnreg_dec<PRODUCER_REGS>();
    if (tid == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        // Wait until the (kt/STAGES - 1)-th use of the slot is released; the first pass is free.
        mbar_wait(&empty[s], ((kt / STAGES) & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], STAGE_BYTES);  // own A + all of B (half may come from the peer)
        tma_load_2d(sA + s * A_TILE_BYTES, &tmA, &full[s], kt * BK, m0);
        for (int p = 0; p < BN / 64; ++p) {
          unsigned char* dst = sB + s * B_TILE_BYTES + p * B_PANEL_BYTES;
          if (CLUSTER_M == 1) tma_load_2d(dst, &tmB, &full[s], n0 + p * 64, kt * BK);
          else if (p % CLUSTER_M == (int)rank)
            tma_load_2d_multicast(dst, &tmB, &full[s], n0 + p * 64, kt * BK, (1u << CLUSTER_M) - 1);
        }
      }
    }
  } else {
    // ---------------- consumers ----------------
    setmaxnreg_inc<CONSUMER_REGS>();
    const int c = wg - 1;
    const int row0 = BM >= 128 ? c * CONSUMER_ROWS : 0;  // this consumer's part of the tile
    const int col0 = BM >= 128 ? 0 : c * CONSUMER_COLS;

    float acc[CONSUMER_MI][CONSUMER_COLS / 2];  // one wgmma accumulator fragment per 64-row slice
#pragma unroll
    for (int mi = 0; mi < CONSUMER_MI; ++mi)
#pragma unroll
      for (int i = 0; i < CONSUMER_COLS / 2; ++i) acc[mi][i] = 0.0f;

    // Tell the producer(s) this consumer no longer reads `slot`: with a cluster, the peer block's
    // producer multicasts into this block's slot too, so its empty barrier hears from us as well.
    auto release_slot = [&](int slot) {
      if (tid % 128 != 0) return;
      if (CLUSTER_M == 1) mbar_arrive(&empty[slot]);
      else
        for (unsigned cta = 0; cta < CLUSTER_M; ++cta) mbar_arrive_cluster(&empty[slot], cta);
    };

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(&full[s], (kt / STAGES) & 1);  // the slot's (kt/STAGES)-th fill has landed

      const unsigned char* a = sA + s * A_TILE_BYTES + row0 * 128;
      const unsigned char* b = sB + s * B_TILE_BYTES + (col0 / 64) * B_PANEL_BYTES;
      wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < BK / 16; ++k16)  // A: 16 k = 32 B along the row; B: 16 k rows = 2048 B
#pragma unroll
        for (int mi = 0; mi < CONSUMER_MI; ++mi)
          wgmma_k16(acc[mi], desc_a_kmajor(a + mi * 64 * 128 + k16 * 32),
                    desc_b_nmajor(b + k16 * 16 * 128, B_PANEL_BYTES));
      wgmma_commit();
      // Keep this k-tile's wgmmas in flight and wait only for the previous k-tile's: its slot can
      // then be handed back while the tensor cores still have work queued from this warpgroup.
      wgmma_wait<1>();
      if (kt > 0) release_slot((kt - 1) % STAGES);
    }
    wgmma_wait<0>();  // the last slot is never refilled, so it needs no release

    // Epilogue: accumulator i of thread (warp w, lane l) in a 64-row slice is
    // C[16w + l/4 + 8*((i/2)%2)][8*(i/4) + 2*(l%4) + i%2]; adjacent columns go out as one bf16x2.
    const int warp = (tid % 128) / 32, lane = tid % 32;
#pragma unroll
    for (int mi = 0; mi < CONSUMER_MI; ++mi)
#pragma unroll
      for (int j = 0; j < CONSUMER_COLS / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + row0 + mi * 64 + warp * 16 + lane / 4 + 8 * h;
          const int col = n0 + col0 + j * 8 + 2 * (lane % 4);
          if (row < M)
            *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
                __floats2bfloat162_rn(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
        }
  }

  // A block must outlive the peer's last arrivals on its empty barriers and multicasts into it.
  if (CLUSTER_M > 1) {
    __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
    cluster_sync();
  }
}
