// forgek/wgmma_pipeline.cuh: the warp-specialised Hopper GEMM mainloop (namespace fk, sm_90a): TMA fills a
// ring of shared-memory slots guarded by full / empty mbarriers, wgmma consumes them; the kernel owns the
// tile order and the epilogue. Block of 384 threads: warpgroup 0 produces, warpgroups 1 and 2 consume.
// Schedules: fk::kCooperative — both consumers share each tile (each owns half of it);
//            fk::kPingPong    — consumer c owns the block's tiles j with j % 2 == c, whole; the two take
//                               turns at the tensor cores, so one's epilogue overlaps the other's mainloop.
// A k-tile is one 128-byte swizzle row of K (64 bf16 or 128 e4m3), so every slot has the same shape:
//   A: [TileM rows][128 B of k]                       K-major, TMA box TileM x k_tile of A [M, K]
//   B: [TileN/64 panels] x 8 KiB, each panel 64 columns by one k-tile, TMA box 64 x 64 per panel
//      (N-major, bf16 B [K, N]: box k_tile x 64) or (K-major, B [N, K]: box 64 x k_tile)
//   fk::WgmmaBf16  — operands: A [M, K] bf16, B [K, N] bf16 row-major (N-major); k_tile 64
//   fk::WgmmaE4m3  — operands: A [M, K] e4m3, B [N, K] e4m3 (both K-major); k_tile 128
//   fk::WgmmaBf16KMajorB — operands: A [M, K] bf16, B [N, K] bf16 (both K-major: a convolution's KRSC
//        filters as [K, R*S*C]); k_tile 64
//   fk::WgmmaPipeline<TileM, TileN, Stages, ClusterM, Operands, Schedule = kCooperative> — TileM in
//        {64, 128, 256}, TileN a multiple of 64 (<= 256 columns per consumer), 2 <= Stages; kSmemBytes
//        (dynamic shared memory it needs), kRows / kCols / kMi (one consumer's part of a tile: kMi slices
//        of 64 x kCols), Acc = float[kMi][kCols / 2] (one consumer thread's accumulators)
//     WgmmaPipeline(smem) — carve the ring out of dynamic shared memory (every thread)
//     .init()             — barriers, then a block / cluster barrier (every thread of the block)
//     static bool producer_warpgroup() — is this thread in warpgroup 0?
//     static .become_producer() / int become_consumer() — setmaxnreg.dec / .inc for this warpgroup (call
//        each inside its own branch, so the compiler sees the producer's code apart); the consumer's
//        index 0 / 1
//     bool .owns(consumer, j) — does `consumer` compute the block's j-th tile (always, cooperative)?
//     .skip(k_tiles)      — a ping-pong consumer passes over a tile of the other one
//     .produce(&tmA, &tmB, a_row, b_col, b_k0, k_tiles) — one producer thread: TMA of k_tiles k-tiles of
//        A rows [a_row, a_row + TileM) and B columns [b_col, b_col + TileN), B's k starting at b_k0
//        (0 for a plain GEMM; batch * K where a batch of B is stacked along k). With ClusterM > 1 each
//        block loads a share of the B panels and multicasts them to the cluster (same b_col in all)
//     .produce_with(load_a, &tmB, b_col, b_k0, k_tiles) — the same with A's k-tile kt loaded by
//        load_a(void* dst, unsigned long long* full, int kt): TMA boxes of kATileBytes in all, in the
//        slot's [TileM][128 B] layout (several boxes of 64 rows: a convolution's blocks of pixels)
//     .consume(acc, consumer, k_tiles, not_first = false, more = false) — acc = that many k-tiles of
//        A · B (a consumer warpgroup). Ping-pong: not_first: wait for the other consumer to have issued
//        the block's previous tile; more: let it start the next once this one's wgmmas are issued
//     .consume_promoted<Every>(acc, part, consumer, k_tiles) — cooperative: the same with the wgmmas
//        summing into `part`, added to acc every Every k-tiles (fp8: bounds the tensor cores' narrower
//        accumulation); k_tiles % Every == 0
//     static .for_each_pair(acc, consumer, f) — f(row, col, v0, v1): tile-relative C[row][col, col+1]
//     .finish()           — every thread, at the end: a cluster barrier so no peer arrives on an exited block
//     .after_ring()       — the first 1024-aligned byte past the ring and its barriers, where an epilogue's
//        staging may start (a kernel that uses it adds 1024 + that staging to kSmemBytes)
//   fk::WgmmaTmaStore<Pipe, Panels, StMatrix = false> — epilogue: a consumer's part of a C tile (bf16) ->
//        128B-swizzled shared staging, Panels panels of [64 rows][64 columns] per round -> TMA stores, left in
//        flight so the consumer goes on with its next tile; kSmemBytes (both consumers' staging);
//        (Pipe::kCols / 64) % Panels == 0. The staging is written by 4-byte stores, or with StMatrix by
//        stmatrix (fk::stmatrix_x4: four 8x8 matrices a warp instruction, a quarter of the stores). Uses
//        named barriers 3 and 4.
//     WgmmaTmaStore(pipe, consumer) — this consumer's staging, at pipe.after_ring()
//     .store(acc, consumer, f, put) — f(row, col, v0, v1) -> __nv_bfloat162: C[row][col, col+1] of the tile
//        from its two accumulators (bias, activation, scales); put(const void* panel, row, col): one thread
//        TMA-stores the staged [64][64] panel at tile-relative (row, col) (2-D or 3-D map, the kernel's)
//     .drain()            — at the consumer's end: the last stores have read the staging
//   Tile order: fk::grouped_raster (forgek/mma_gemm_tile.cuh, included) maps block -> (tile_m, tile_n); with
//        group_m and the tile-row count multiples of ClusterM, a cluster gets vertically adjacent tiles.
// The produce / consume (+ skip) calls of one block must see the same k-tile sequence (a running count
// turns the ring); across a cluster, every block must pass the same tiles through its ring. Ping-pong
// uses named barriers 1 and 2.
#pragma once
#include <cuda_bf16.h>
#include <forgek/cluster.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/mma_gemm_tile.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

namespace fk {

constexpr int kCooperative = 0, kPingPong = 1;

// bf16 operands, B row-major [K, N]: each 64-column panel of a k-tile is one TMA box at (n, k), read by
// wgmma "transposed" (N-major), so B needs no copy. One k32-byte step = 16 k.
struct WgmmaBf16 {
  static constexpr int k_tile = 64;
  FK_DEVICE static void b_coords(int n, int k, int* c0, int* c1) { *c0 = n; *c1 = k; }
  // d (+)= the k-step `ks` (0..3) of slot tiles a ([rows][128 B], K-major) and b (64-column 8 KiB panels).
  template <int Cols>
  FK_DEVICE static void mma(float* d, const unsigned char* a, const unsigned char* b, int ks, int scale_d)
  {
    wgmma_m64k16_bf16<Cols>(d, wgmma_desc_kmajor_128b(a + ks * 32), wgmma_desc_nmajor_128b(b + ks * 16 * 128, 8192),
                            scale_d);
  }
};

// e4m3 operands, B stored [N, K]: each 64-row panel (64 output columns x 128 k bytes) is one TMA box at
// (k, n); both operands K-major, one descriptor spans all panels (8-row atoms 1024 B apart). k32 steps.
struct WgmmaE4m3 {
  static constexpr int k_tile = 128;
  FK_DEVICE static void b_coords(int n, int k, int* c0, int* c1) { *c0 = k; *c1 = n; }
  template <int Cols>
  FK_DEVICE static void mma(float* d, const unsigned char* a, const unsigned char* b, int ks, int scale_d)
  {
    wgmma_m64k32_e4m3<Cols>(d, wgmma_desc_kmajor_128b(a + ks * 32), wgmma_desc_kmajor_128b(b + ks * 32), scale_d);
  }
};

// bf16 operands with B stored [N, K] (K-major, like e4m3's): each 64-row panel (64 output columns x 64 k)
// is one TMA box at (k, n), and one K-major descriptor spans all panels. k16 steps of 32 bytes.
struct WgmmaBf16KMajorB {
  static constexpr int k_tile = 64;
  FK_DEVICE static void b_coords(int n, int k, int* c0, int* c1) { *c0 = k; *c1 = n; }
  template <int Cols>
  FK_DEVICE static void mma(float* d, const unsigned char* a, const unsigned char* b, int ks, int scale_d)
  {
    wgmma_m64k16_bf16<Cols, 0>(d, wgmma_desc_kmajor_128b(a + ks * 32), wgmma_desc_kmajor_128b(b + ks * 32), scale_d);
  }
};

template <int TileM, int TileN, int Stages, int ClusterM, class Operands, int Schedule = kCooperative>
struct WgmmaPipeline {
  static constexpr bool kPing = Schedule == kPingPong;
  static constexpr int kATileBytes = TileM * 128;   // [TileM][128 B]
  static constexpr int kBPanelBytes = 64 * 128;     // 64 columns x one k-tile
  static constexpr int kBTileBytes = TileN * 128;   // TileN / 64 panels
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  // 1024 B to align the ring for the 128-byte swizzle, then 2 barriers per slot.
  static constexpr int kSmemBytes = Stages * kStageBytes + 1024 + Stages * 16;
  // Cooperative split of the tile between the consumers: TileM >= 128: consumer c owns rows
  // [c*TileM/2, (c+1)*TileM/2) and every column; TileM == 64: all 64 rows and columns
  // [c*TileN/2, (c+1)*TileN/2). Ping-pong: a consumer owns its tiles whole.
  static constexpr int kRows = kPing ? TileM : TileM >= 128 ? TileM / 2 : 64;
  static constexpr int kCols = kPing ? TileN : TileM >= 128 ? TileN : TileN / 2;
  static constexpr int kRow0 = kPing || TileM < 128 ? 0 : kRows;  // consumer c's part starts at c*kRow0, c*kCol0
  static constexpr int kCol0 = kPing || TileM >= 128 ? 0 : kCols;
  static constexpr int kReleases = kPing ? 1 : 2;  // consumers of one block that read each slot
  static constexpr int kMi = kRows / 64;  // m64 wgmmas per k-step
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128*40 + 256*232 <= 65536
  using Acc = float[kMi][kCols / 2];
  static_assert(TileM == 64 || TileM == 128 || TileM == 256, "consumers split TileM in m64 slices");
  static_assert(TileN % 64 == 0 && kCols <= 256 && kCols >= 16, "64-column B panels, one wgmma per slice");
  static_assert((TileN / 64) % ClusterM == 0 && Stages >= 2, "B panels shared evenly by the cluster");
  static_assert(kMi * kCols / 2 <= 128, "accumulators of one consumer thread: at most 128 floats");
  static_assert(Stages * 16 <= 1024, "the barriers fit the 1024 B before after_ring()");

  unsigned char* sa;         // Stages x A tile
  unsigned char* sb;         // Stages x B tile
  unsigned long long* full;  // full[s]: slot s loaded (the producer's expect_tx + TMA bytes)
  unsigned long long* empty; // empty[s]: slot s released by its consumers in every block of the cluster
  int it = 0;                // k-tiles this thread has passed through the ring: slot it % Stages, pass it / Stages

  FK_DEVICE explicit WgmmaPipeline(unsigned char* smem)
  {
    // The 128-byte swizzle repeats every 1024 B and wgmma assumes atoms start 1024-aligned; the offset
    // is the same in every block of a cluster, as multicast requires.
    sa = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem) + 1023) & ~1023ull);
    sb = sa + Stages * kATileBytes;
    full = reinterpret_cast<unsigned long long*>(sb + Stages * kBTileBytes);
    empty = full + Stages;
  }

  FK_DEVICE void init()
  {
    if (threadIdx.x == 0) {
      for (int s = 0; s < Stages; ++s) {
        mbar_init(&full[s], 1);
        mbar_init(&empty[s], kReleases * ClusterM);
      }
      fence_barrier_init();
    }
    // No block may arrive on, or multicast into, a peer whose barriers are not initialised yet.
    if (ClusterM > 1) cluster_sync();
    else __syncthreads();
  }

  FK_DEVICE static bool producer_warpgroup() { return threadIdx.x < 128; }
  FK_DEVICE static void become_producer() { warpgroup_reg_dealloc<kProducerRegs>(); }
  FK_DEVICE static int become_consumer()
  {
    warpgroup_reg_alloc<kConsumerRegs>();
    return threadIdx.x / 128 - 1;
  }
  FK_DEVICE static bool owns(int consumer, int j) { return !kPing || j % 2 == consumer; }
  FK_DEVICE void skip(int k_tiles) { it += k_tiles; }

  FK_DEVICE void produce(const CUtensorMap* tma, const CUtensorMap* tmb, int a_row, int b_col, int b_k0, int k_tiles)
  {
    produce_with([&](void* dst, unsigned long long* bar, int kt) { tma_load_2d(dst, tma, bar, kt * Operands::k_tile, a_row); },
                 tmb, b_col, b_k0, k_tiles);
  }

  template <class LoadA>
  FK_DEVICE void produce_with(LoadA&& load_a, const CUtensorMap* tmb, int b_col, int b_k0, int k_tiles)
  {
    const unsigned rank = ClusterM > 1 ? cluster_ctarank() : 0;
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % Stages;
      // Wait until the slot's previous use is released; a fresh barrier passes parity 1 at once.
      mbar_wait(&empty[s], ((it / Stages) & 1) ^ 1);
      mbar_arrive_expect_tx(&full[s], kStageBytes);  // own A + all of B (some panels come from peers)
      load_a(sa + s * kATileBytes, &full[s], kt);
      for (int p = 0; p < TileN / 64; ++p) {
        int c0, c1;
        Operands::b_coords(b_col + p * 64, b_k0 + kt * Operands::k_tile, &c0, &c1);
        unsigned char* dst = sb + s * kBTileBytes + p * kBPanelBytes;
        if (ClusterM == 1) tma_load_2d(dst, tmb, &full[s], c0, c1);
        else if (p % ClusterM == (int)rank)
          tma_load_2d_multicast(dst, tmb, &full[s], c0, c1, (unsigned short)((1u << ClusterM) - 1));
      }
    }
  }

  // Tells the producers that this consumer no longer reads `slot`: with a cluster, every peer's producer
  // multicasts into this block's slot, so every peer's empty barrier hears from us. The remote arrive
  // keeps the default .release.cta: the slot's readers are this warpgroup's wgmmas, already retired,
  // and .release.cluster makes every arrive a cluster-wide fence (measured 1.6-1.9x slower).
  FK_DEVICE void release(int slot) const
  {
    if (threadIdx.x % 128 != 0) return;
    if (ClusterM == 1) mbar_arrive(&empty[slot]);
    else
      for (unsigned cta = 0; cta < ClusterM; ++cta) mbar_arrive_cluster(&empty[slot], cta);
  }

  // The wgmmas of the k-tile in slot s for this consumer's part; scale_d 0 on the first k-step overwrites d.
  FK_DEVICE void mma_slot(Acc& d, int s, int consumer, bool overwrite) const
  {
    const int row0 = consumer * kRow0, col0 = consumer * kCol0;
    const unsigned char* a = sa + s * kATileBytes + row0 * 128;
    const unsigned char* b = sb + s * kBTileBytes + (col0 / 64) * kBPanelBytes;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)  // four 32-byte k-steps per 128-byte row
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi)
        Operands::template mma<kCols>(d[mi], a + mi * 64 * 128, b, ks, (overwrite && ks == 0) ? 0 : 1);
    wgmma_commit();
  }

  FK_DEVICE void consume(Acc& acc, int consumer, int k_tiles, bool not_first = false, bool more = false)
  {
    // Ping-pong turns: a consumer waits on a slot's parity only after the other has waited on every
    // earlier k-tile, so no full barrier is ever two phases behind the pass it is asked about.
    if (kPing && not_first) named_barrier_sync(1 + consumer, 256);
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % Stages;
      mbar_wait(&full[s], (it / Stages) & 1);
      mma_slot(acc, s, consumer, kt == 0);
      if (kPing && more && kt == k_tiles - 1) named_barrier_arrive(2 - consumer, 256);
      // Keep this k-tile's wgmmas in flight, wait for the previous one's, and hand its slot back.
      wgmma_wait<1>();
      if (kt > 0) release((it - 1) % Stages);
    }
    wgmma_wait<0>();
    release((it - 1) % Stages);
  }

  template <int Every>
  FK_DEVICE void consume_promoted(Acc& acc, Acc& part, int consumer, int k_tiles)
  {
    static_assert(!kPing, "promotion is written for the cooperative schedule");
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
      for (int i = 0; i < kCols / 2; ++i) acc[mi][i] = 0.0f;
    // Every k-tile of a group has a fixed place in it (unrolled), so the compiler sees that `part` is
    // read only after wait<0> and keeps the other k-tiles' wgmmas in flight.
    for (int kt0 = 0; kt0 < k_tiles; kt0 += Every) {
#pragma unroll
      for (int e = 0; e < Every; ++e, ++it) {
        const int s = it % Stages;
        mbar_wait(&full[s], (it / Stages) & 1);
        mma_slot(part, s, consumer, e == 0);
        if (e < Every - 1) {
          wgmma_wait<1>();
          if (e > 0) release((it - 1) % Stages);
        } else {
          // Promotion: every wgmma writing `part` must retire before its sum joins the fp32 total.
          wgmma_wait<0>();
          if (e > 0) release((it - 1) % Stages);
          release(s);
#pragma unroll
          for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
            for (int i = 0; i < kCols / 2; ++i) acc[mi][i] += part[mi][i];
        }
      }
    }
  }

  // Accumulator float i of warpgroup thread t in slice mi is C[row][col] of the tile (fk::wgmma_acc_row /
  // _col); floats 2j and 2j + 1 are adjacent columns of one row.
  template <class F>
  FK_DEVICE static void for_each_pair(const Acc& acc, int consumer, F&& f)
  {
    const int t = threadIdx.x % 128;
    const int row0 = consumer * kRow0, col0 = consumer * kCol0;
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
      for (int i = 0; i < kCols / 2; i += 2)
        f(row0 + mi * 64 + wgmma_acc_row(i, t), col0 + wgmma_acc_col(i, t), acc[mi][i], acc[mi][i + 1]);
  }

  FK_DEVICE unsigned char* after_ring() const { return sa + Stages * kStageBytes + 1024; }

  FK_DEVICE void finish()
  {
    if (ClusterM > 1) {
      __syncwarp();  // the producer warp diverged around its loader thread; the barrier is .aligned
      cluster_sync();
    }
  }
};

// Epilogue through shared memory and TMA stores: a warp's bf16x2 writes of one 8-column group cover 8
// rows x one 16-byte chunk each, which the 128-byte swizzle spreads over all 32 banks; the TMA engine then
// writes whole 128-byte lines of C, and the consumer waits for a round's stores only when it next needs
// that staging (bulk_wait_read), so the writes of tile j overlap the mainloop of tile j + 1.
template <class Pipe, int Panels, bool StMatrix = false>
struct WgmmaTmaStore {
  static constexpr int kPanelBytes = 64 * 128;  // [64 rows][64 bf16], rows 128 B, 128B-swizzled
  static constexpr int kConsumerBytes = Panels * kPanelBytes;
  static constexpr int kSmemBytes = 2 * kConsumerBytes;
  static constexpr int kRounds = Pipe::kCols / 64 / Panels;  // rounds per m64 slice
  static_assert(Panels >= 1 && (Pipe::kCols / 64) % Panels == 0, "a round is whole 64-column panels");

  unsigned char* stage;  // this consumer's Panels panels, 1024-aligned

  FK_DEVICE WgmmaTmaStore(const Pipe& pipe, int consumer) : stage(pipe.after_ring() + consumer * kConsumerBytes) {}

  template <class F, class Put>
  FK_DEVICE void store(const typename Pipe::Acc& acc, int consumer, F&& f, Put&& put)
  {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int row0 = consumer * Pipe::kRow0, col0 = consumer * Pipe::kCol0;
#pragma unroll
    for (int mi = 0; mi < Pipe::kMi; ++mi)
#pragma unroll
      for (int part = 0; part < kRounds; ++part) {
        if (t == 0) bulk_wait_read<0>();  // the previous round's stores have read the staging
        named_barrier_sync(3 + consumer, 128);
        // (r, n) of a panel lives at r*128 + ((n/8) ^ (r%8))*16 + (n%8)*2. Warp w holds rows [16w, 16w + 16)
        // of the slice: for the 8-column group j, floats 4j, 4j+1 of lane l are row 16w + l/4 and floats
        // 4j+2, 4j+3 row 16w + l/4 + 8, columns 8j + 2(l%4), +1 (an 8x8 matrix fragment each).
        if constexpr (StMatrix) {
#pragma unroll
          for (int jj = 0; jj < 8 * Panels; jj += 2) {  // groups jj, jj + 1 of the round: four 8x8 matrices
            unsigned v[4];                              // matrix q: group jj + q/2, rows + 8*(q%2)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const int j = part * 8 * Panels + jj + q / 2, h = q % 2;
              const __nv_bfloat162 x = f(row0 + mi * 64 + warp * 16 + lane / 4 + 8 * h, col0 + 8 * j + 2 * (lane % 4),
                                         acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
              v[q] = *reinterpret_cast<const unsigned*>(&x);
            }
            const int m = lane / 8, g = jj + m / 2;  // lane l addresses row l%8 of matrix l/8
            const int r = warp * 16 + 8 * (m % 2) + lane % 8;
            stmatrix_x4(stage + (g / 8) * kPanelBytes + r * 128 + (((g % 8) ^ (lane % 8)) * 16), v);
          }
        } else {
#pragma unroll
          for (int jj = 0; jj < 8 * Panels; ++jj)  // 8-column group jj of the round: floats 4j..4j+3
#pragma unroll
            for (int h = 0; h < 2; ++h) {          // rows r and r + 8
              const int j = part * 8 * Panels + jj;
              const int r = warp * 16 + lane / 4 + 8 * h;  // r % 8 == lane / 4
              unsigned char* dst =
                  stage + (jj / 8) * kPanelBytes + r * 128 + (((jj % 8) ^ (lane / 4)) * 16) + 4 * (lane % 4);
              *reinterpret_cast<__nv_bfloat162*>(dst) = f(row0 + mi * 64 + r, col0 + 8 * j + 2 * (lane % 4),
                                                          acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
            }
        }
        fence_proxy_async_smem();  // the generic writes, visible to the TMA engine
        named_barrier_sync(3 + consumer, 128);
        if (t == 0) {
#pragma unroll
          for (int p = 0; p < Panels; ++p)
            put(stage + p * kPanelBytes, row0 + mi * 64, col0 + (part * Panels + p) * 64);
          bulk_commit();
        }
      }
  }

  FK_DEVICE void drain() const
  {
    if (threadIdx.x % 128 == 0) bulk_wait<0>();
  }
};

}  // namespace fk
