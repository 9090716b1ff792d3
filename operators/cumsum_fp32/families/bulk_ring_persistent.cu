/* forgek
{
  "name": "cumsum_bulk_ring_persistent",
  "mechanisms": ["tma", "mbarrier_pipeline", "persistent_grid", "block_scan", "warp_shuffle_reduction",
                 "vector_16B", "streaming_store"],
  "controls": {"mbarrier_pipeline": ["STAGES"], "tile": ["SEG"], "block_size": ["THREADS"],
               "persistent_grid": ["CTAS_PER_SM"], "lookback_backoff": ["BACKOFF_NS"]},
  "params": {"STAGES": [2, 3, 4], "SEG": [8, 4, 12, 16], "THREADS": [256, 128, 512], "CTAS_PER_SM": [3, 2, 1, 4],
             "BACKOFF_NS": [32, 0, 128]},
  "let": {"tile_vecs": "THREADS*SEG", "tiles": "M*ceil_div(N/4, tile_vecs)", "smem_bytes": "STAGES*tile_vecs*16"},
  "constraints": ["N % 4 == 0", "CTAS_PER_SM*THREADS <= 2048", "CTAS_PER_SM*(smem_bytes + 1024) <= 233472",
                  "CTAS_PER_SM*THREADS*(5*SEG + 32) <= 65536"],
  "workspaces": [{"name": "lookback", "bytes": "8 + 8*tiles", "zero": true}],
  "launches": [
    {"kernel": "cumsum_bulk_ring_persistent", "grid": ["min(num_sms*CTAS_PER_SM, tiles)"], "block": ["THREADS"],
     "smem": "smem_bytes", "args": ["x", "y", "lookback", "M", "N"]}
  ]
}
*/
// Inclusive prefix sum of each row of x[M, N] (fp32; M = 1 is one long vector) in one pass, by a
// persistent grid whose CTAs stream their tiles into shared memory with the bulk-copy (TMA) engine,
// STAGES tiles ahead, and chain the tiles of a row by decoupled look-back. Unlike the reference's design (one tile per CTA, loads through
// registers, a new CTA per tile), a CTA here lives for the whole scan: up to STAGES tiles per CTA
// are in flight without holding a register, and the tile counter's round trip to L2 is taken one
// refill ahead, off the path of every tile.
//
//   x, y       [M, N] fp32, each row viewed as [N/4] float4 vectors (N % 4 == 0: every row starts
//              16-byte aligned, as a bulk copy needs), cut into row_tiles tiles of THREADS*SEG
//              vectors; a row's last tile may be partial. A tile never crosses a row: tile id g of
//              the M*row_tiles is tile g % row_tiles of row g / row_tiles, and its look-back runs
//              over its row's status words only (before the row's first tile reads as a PREFIX of 0)
//   lookback   workspace, zeroed before the launch: word 0 = tile counter (u32), then
//              status[M][row_tiles] u64 words, the look-back's (<forgek/lookback.cuh>: nothing yet,
//              AGGREGATE = the tile's sum, PREFIX = the sum of tiles 0..t)
//   stage_buf  [STAGES][THREADS*SEG] float4 (dynamic shared memory): one tile of x per stage
//   full       [STAGES] mbarriers: stage s holds its tile once the copy's bytes have landed
//   grid       -> min(num_sms*CTAS_PER_SM, tiles) CTAs (num_sms SMs), all resident; iteration i of a CTA uses stage
//                 i % STAGES (phase parity (i / STAGES) & 1)
//   producer   -> lane 0 of the last warp: takes tile ids from the counter one at a time (one per
//                 stage at the start, then one per refill, each used one refill later) and issues one bulk copy
//                 per tile; an id past the end arrives on the stage's barrier without a copy, and
//                 the CTA stops there (ids only grow, so nothing is in flight when it exits)
//   warp w     -> the contiguous segment of 32*SEG vectors [w*32*SEG, (w+1)*32*SEG) of the tile
//   lane l     -> vectors l, l+32, ..., of its warp's segment: conflict-free 16-byte shared reads
//                 into registers, then coalesced 512-byte-per-warp streaming stores of y
//
// Per tile: copy the lane's SEG vectors to registers; scan them (in-float4 prefix, a shuffle scan
// over the 32 lanes per row, a running carry over the rows); publish the warp totals; barrier
// (the stage is then free, and the producer refills it at once); warp 0 publishes the tile
// AGGREGATE, looks back over 32 predecessors at a time to the nearest PREFIX and publishes its own
// PREFIX; barrier; every lane adds its offset and stores. Deadlock-free: a CTA takes tile ids in
// increasing order and processes them in that order, so the smallest unfinished tile is always the
// one its (running) CTA is working on, and every tile before it has published its PREFIX (a tile
// waits only on smaller ids of its own row).
// fp32 throughout; tiles chained by aggregates (sqrt(tiles) ulp error growth, see operator.json).
// BACKOFF_NS: an incomplete look-back window is polled again after __nanosleep(BACKOFF_NS); 0 polls
// back to back.
#include <forgek/lookback.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/reduce.cuh>
#include <forgek/tma.cuh>
#include <forgek/vec.cuh>
#include <forgek/scan.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;
constexpr int kWarpVecs = kWarp * SEG;     // float4 vectors per warp segment
constexpr int kTileVecs = THREADS * SEG;   // float4 vectors per tile
constexpr int kProducer = THREADS - kWarp;  // lane 0 of the last warp

// Tile id g of all M*row_tiles: `row` and the tile's index within it.
struct TilePlace {
  int row, tile;
};
__device__ __forceinline__ TilePlace place_of(int g, int row_tiles) {
  const int row = g / row_tiles;
  return {row, g - row * row_tiles};
}

// The producer: stage `stage` gets tile id `g`. A valid tile is one bulk copy of its (possibly
// partial) bytes completing on `bar`; past the end, a plain arrival tells the consumers to stop.
__device__ __forceinline__ void fill_stage(float4* stage, unsigned long long* bar, int* tile_of, int g,
                                           const float* __restrict__ x, int N, int row_tiles, int tiles) {
  *tile_of = g;  // published to the consumers by the arrival below (release), read after their wait
  if (g < tiles) {
    const TilePlace place = place_of(g, row_tiles);
    const int vecs = min(kTileVecs, N / 4 - place.tile * kTileVecs);
    const unsigned bytes = static_cast<unsigned>(vecs) * 16u;
    fk::mbar_arrive_expect_tx(bar, bytes);
    fk::bulk_load(stage, x + static_cast<size_t>(place.row) * N + 4 * static_cast<size_t>(place.tile) * kTileVecs,
                  bytes, bar);
  } else {
    fk::mbar_arrive(bar);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
cumsum_bulk_ring_persistent(const float* __restrict__ x,                // [M, N]
                            float* __restrict__ y,                      // [M, N]
                            unsigned long long* __restrict__ lookback,  // [1 + M*row_tiles], zeroed
                            int M, int N) {
  extern __shared__ __align__(128) float4 stage_buf[];  // [STAGES][kTileVecs]
  __shared__ __align__(8) unsigned long long full[STAGES];
  __shared__ int tile_of[STAGES];       // the tile id each stage holds (or an id past the end)
  __shared__ float warp_total[kWarps];  // [kWarps] sum of each warp segment of the current tile
  __shared__ float tile_exclusive;      // sum of x over the row's tiles before the current one

  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int row_vecs = N / 4;  // N % 4 == 0 (a manifest constraint)
  const int row_tiles = (row_vecs + kTileVecs - 1) / kTileVecs;
  const int tiles = M * row_tiles;  // tile ids of all rows
  unsigned* tile_counter = reinterpret_cast<unsigned*>(lookback);

  int next_tile = 0;  // producer only: the id its next refill will use, taken one refill ahead
  if (threadIdx.x == kProducer) {
    for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[s], 1);
    fk::fence_barrier_init();
    // One id per atomic, never a block of consecutive ids: every CTA's first tiles interleave with
    // the others' (about grid apart), so a tile's predecessors are at the heads of other CTAs'
    // rings. A block of STAGES ids per CTA would put tile t-1 behind t-2 in the same ring, and the
    // tiles would publish one after another, as a serial chain through every CTA.
    for (int s = 0; s < STAGES; ++s) {
      const int tile = static_cast<int>(atomicAdd(tile_counter, 1u));
      fill_stage(stage_buf + s * kTileVecs, &full[s], &tile_of[s], tile, x, N, row_tiles, tiles);
    }
    next_tile = static_cast<int>(atomicAdd(tile_counter, 1u));
  }
  __syncthreads();  // barriers initialised before anyone waits on them

  for (int it = 0;; ++it) {
    const int s = it % STAGES;
    fk::mbar_wait(&full[s], (it / STAGES) & 1);
    const int g = tile_of[s];
    if (g >= tiles) break;  // CTA-uniform: every later stage holds a larger id
    const TilePlace place = place_of(g, row_tiles);
    const int tile = place.tile;  // within the row
    float* __restrict__ y_row = y + static_cast<size_t>(place.row) * N;
    unsigned long long* status = lookback + 1 + static_cast<size_t>(place.row) * row_tiles;  // [row_tiles] of this row
    const float4* stage = stage_buf + s * kTileVecs;
    const int seg_first = tile * kTileVecs + warp * kWarpVecs + lane;  // vector of the row, segment row 0

    // This lane's SEG vectors to registers (vectors past the end of the row were not copied: zeros).
    float4 v[SEG];
#pragma unroll
    for (int k = 0; k < SEG; ++k)
      v[k] = seg_first + k * kWarp < row_vecs ? stage[warp * kWarpVecs + k * kWarp + lane]
                                              : make_float4(0.f, 0.f, 0.f, 0.f);

    // Scan the warp segment. offset[k]: sum of the segment before this lane's vector of row k;
    // carry: the segment's sum (the same in every lane).
    float offset[SEG];
    const float carry = fk::warp_scan_float4_rows<SEG>(v, offset);
    if (lane == 0) warp_total[warp] = carry;
    __syncthreads();  // stage s is in registers everywhere; the warp totals are visible

    if (threadIdx.x == kProducer) {
      fill_stage(stage_buf + s * kTileVecs, &full[s], &tile_of[s], next_tile, x, N, row_tiles, tiles);
      next_tile = static_cast<int>(atomicAdd(tile_counter, 1u));  // not needed until the next refill
    }
    float before = 0.f;  // sum of the earlier warps' segments of this tile (read before the next barrier)
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      if (w < warp) before += warp_total[w];

    if (warp == 0) {
      float aggregate = 0.f;  // the tile's sum, in warp order
#pragma unroll
      for (int w = 0; w < kWarps; ++w) aggregate += warp_total[w];
      const float exclusive = fk::lookback_chain<BACKOFF_NS>(status, tile, aggregate, lane);
      if (lane == 0) tile_exclusive = exclusive;
    }
    __syncthreads();

    const float base = tile_exclusive + before;
#pragma unroll
    for (int k = 0; k < SEG; ++k) {
      const int idx = seg_first + k * kWarp;
      const float add = base + offset[k];
      const float4 out = make_float4(v[k].x + add, v[k].y + add, v[k].z + add, v[k].w + add);
      if (idx < row_vecs) fk::st_global_cs_f4(y_row + 4 * static_cast<size_t>(idx), out);
    }
  }
}
