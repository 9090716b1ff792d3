/* forgek
{
  "name": "cumsum_decoupled_lookback",
  "mechanisms": ["vector_16B", "block_scan", "warp_shuffle_reduction", "memory_level_parallelism", "streaming_store"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["VECS"], "tile_id_speculation": ["SPECULATE"],
               "lookback_backoff": ["BACKOFF_NS"]},
  "params": {"THREADS": [256, 128, 512], "VECS": [4, 2, 6, 8, 12, 16], "SPECULATE": [1, 0], "BACKOFF_NS": [32, 0, 128]},
  "let": {"tile": "THREADS*VECS*4", "row_tiles": "ceil_div(N, tile)", "tiles": "M*row_tiles"},
  "constraints": ["N % 4 == 0", "THREADS*VECS <= 2048"],
  "workspaces": [{"name": "lookback", "bytes": "8 + 8*tiles", "zero": true}],
  "launches": [
    {"kernel": "cumsum_decoupled_lookback", "grid": ["tiles"], "block": ["THREADS"],
     "args": ["x", "y", "lookback", "N"]}
  ]
}
*/
// Inclusive prefix sum of each row of x[M, N] (fp32; M = 1 is one long vector) in ONE pass over
// memory: the decoupled look-back scan of CUB's DeviceScan (Merrill & Garland), with its knobs as
// params. x is read once and y written once (8 bytes per element, the minimum); tiles learn the
// sum of everything before them in their row from small status words in L2 instead of a second
// pass over x.
//
//   x, y      [M, N] fp32, each row viewed as [N/4] float4 vectors (N % 4 == 0: every row starts
//             16-byte aligned), cut into row_tiles tiles of THREADS*VECS vectors (THREADS*VECS*4
//             elements; a row's last tile may be partial). A tile never crosses a row: tile g of
//             the M*row_tiles is tile g % row_tiles of row g / row_tiles, and a row whose length is
//             at most one tile is scanned by one CTA with no look-back at all
//   lookback  workspace, zeroed before the launch: word 0 = tile counter (u32), then
//             status[M][row_tiles] u64 words, one per tile (see below)
//   CTA       -> one tile, whose index comes from the tile counter (atomicAdd), so tile ids are
//                handed out in the order CTAs actually start: every tile a CTA waits on belongs to
//                a CTA already running, and the look-back cannot deadlock whatever the scheduler does
//   warp w    -> the contiguous segment of 32*VECS vectors [w*32*VECS, (w+1)*32*VECS) of the tile
//   lane l    -> vectors l, l+32, ..., l+32*(VECS-1) of its warp's segment: each of the VECS
//                16-byte loads (all issued before any is used) is one contiguous 512-byte row per
//                warp, fully coalesced, and so is each store. No shared-memory transpose.
//
// Within a warp segment the element order is row k (32 vectors), lane, component: a lane scans its
// float4 (3 adds), the warp scans the lane totals of row k with shuffles, and a running `carry`
// chains the rows. The warp totals are combined through shared memory (one barrier), which gives
// each warp its offset inside the tile and the tile aggregate.
//
// Status word of tile t: <forgek/lookback.cuh> (64 bits written whole: nothing yet, AGGREGATE =
// sum of tile t, or PREFIX = sum of tiles 0..t, with the fp32 value).
// Warp 0 of tile t (fk::lookback_chain over its row's status words, t counted within the row)
// publishes AGGREGATE, then looks back over a window of 32 predecessors at a time
// (lane l reads tile t-1-l; before the row's first tile reads as a PREFIX of 0): once no lane of the window sees "nothing yet", it sums the values of
// the lanes up to the nearest PREFIX (or all 32 aggregates and moves the window 32 tiles back),
// then publishes PREFIX = exclusive + aggregate. Tiles are summed in fp32 and chained by their
// aggregates: the error grows like sqrt(tiles) ulps of |y|, well inside the tolerance (see
// operator.json), unlike one running sum over all N elements.
//
// SPECULATE 1: the tile's loads are issued for tile blockIdx.x while thread 0's atomicAdd is in
// flight (CTAs almost always start in blockIdx order, so the counter almost always returns
// blockIdx.x); a CTA whose counter value differs reloads its real tile. This hides the atomic's
// round trip to L2 behind the loads. 0: load after the tile id is known.
// BACKOFF_NS: a window that is not complete yet is polled again after __nanosleep(BACKOFF_NS)
// (CUB's look-back delay): the status words of the frontier sit in a few L2 lines that every
// waiting tile polls; 0 polls back to back.
#include <forgek/lookback.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>
#include <forgek/scan.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;
constexpr int kWarpVecs = kWarp * VECS;   // float4 vectors per warp segment
constexpr int kTileVecs = THREADS * VECS;  // float4 vectors per tile

// Lane `lane` of warp `warp` loads its VECS vectors of tile `tile` of the row x_row (row k: vector
// k*32 + lane of the warp segment); vectors past the end of the row read as zeros (they add
// nothing and are never stored).
__device__ __forceinline__ void load_tile(const float* __restrict__ x_row, int tile, int warp, int lane, int row_vecs,
                                          float4 (&v)[VECS]) {
  const int first = tile * kTileVecs + warp * kWarpVecs + lane;
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int idx = first + k * kWarp;
    v[k] = idx < row_vecs ? fk::ld_global_nc_na_f4(x_row + 4 * static_cast<size_t>(idx))
                          : make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

// Tile g of all M*row_tiles: `row` and the tile's index within it.
struct TilePlace {
  int row, tile;
};
__device__ __forceinline__ TilePlace place_of(int g, int row_tiles) {
  const int row = g / row_tiles;
  return {row, g - row * row_tiles};
}

extern "C" __global__ void __launch_bounds__(THREADS)
cumsum_decoupled_lookback(const float* __restrict__ x,                 // [M, N]
                          float* __restrict__ y,                       // [M, N]
                          unsigned long long* __restrict__ lookback,   // [1 + M*row_tiles], zeroed
                          int N) {
  __shared__ int tile_slot;             // this CTA's tile, from the counter
  __shared__ float warp_total[kWarps];  // [kWarps] sum of each warp segment
  __shared__ float tile_exclusive;      // sum of x over all earlier tiles of the row

  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int row_vecs = N / 4;  // N % 4 == 0 (a manifest constraint)
  const int row_tiles = (row_vecs + kTileVecs - 1) / kTileVecs;
  unsigned* tile_counter = reinterpret_cast<unsigned*>(lookback);

  if (threadIdx.x == 0) tile_slot = static_cast<int>(atomicAdd(tile_counter, 1u));
  float4 v[VECS];  // [VECS] this lane's vectors, then their scanned values
#if SPECULATE
  const TilePlace guess = place_of(blockIdx.x, row_tiles);
  load_tile(x + static_cast<size_t>(guess.row) * N, guess.tile, warp, lane, row_vecs, v);  // in flight across the barrier
#endif
  __syncthreads();
  const int slot = tile_slot;
  const TilePlace place = place_of(slot, row_tiles);
  const int tile = place.tile;  // within the row
  const float* __restrict__ x_row = x + static_cast<size_t>(place.row) * N;
  float* __restrict__ y_row = y + static_cast<size_t>(place.row) * N;
  unsigned long long* status = lookback + 1 + static_cast<size_t>(place.row) * row_tiles;  // [row_tiles] of this row
#if SPECULATE
  if (slot != static_cast<int>(blockIdx.x)) load_tile(x_row, tile, warp, lane, row_vecs, v);  // CTA-uniform, rare
#else
  load_tile(x_row, tile, warp, lane, row_vecs, v);
#endif

  // Scan the warp segment. offset[k]: sum of the segment before this lane's vector of row k;
  // carry: the segment's sum (the same in every lane).
  float offset[VECS];
  const float carry = fk::warp_scan_float4_rows<VECS>(v, offset);
  if (lane == 0) warp_total[warp] = carry;
  __syncthreads();

  float before = 0.f;  // sum of the earlier warps' segments of this tile
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    if (w < warp) before += warp_total[w];

  if (warp == 0) {
    float aggregate = 0.f;  // the tile's sum, in warp order (the same value in every lane)
#pragma unroll
    for (int w = 0; w < kWarps; ++w) aggregate += warp_total[w];
    const float exclusive = fk::lookback_chain<BACKOFF_NS>(status, tile, aggregate, lane);
    if (lane == 0) tile_exclusive = exclusive;
  }
  __syncthreads();

  // y = (earlier tiles of the row + earlier warps) + (earlier rows and lanes) + inclusive in-vector prefix.
  const float base = tile_exclusive + before;
  const int first = tile * kTileVecs + warp * kWarpVecs + lane;
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int idx = first + k * kWarp;
    const float add = base + offset[k];
    const float4 out = make_float4(v[k].x + add, v[k].y + add, v[k].z + add, v[k].w + add);
    if (idx < row_vecs) fk::st_global_cs_f4(y_row + 4 * static_cast<size_t>(idx), out);
  }
}
