/* forgek
{
  "name": "cumsum_reduce_then_scan",
  "mechanisms": ["block_scan"],
  "params": {"THREADS": 256, "ITEMS": 8, "SCAN_THREADS": 1024},
  "let": {"tile": "THREADS*ITEMS", "tiles": "ceil_div(N, tile)"},
  "workspaces": [{"name": "tile_sum", "bytes": "4*M*tiles", "zero": false}],
  "launches": [
    {"kernel": "cumsum_seed_tile_sums",   "grid": ["tiles", "M"], "block": ["THREADS"],      "args": ["x", "tile_sum", "N"]},
    {"kernel": "cumsum_seed_scan_sums",   "grid": ["M"],          "block": ["SCAN_THREADS"], "args": ["tile_sum", "tiles"]},
    {"kernel": "cumsum_seed_scan_tiles",  "grid": ["tiles", "M"], "block": ["THREADS"],      "args": ["x", "tile_sum", "y", "N"]}
  ]
}
*/
// A plain starting point: reduce-then-scan in fp32, three launches over tiles of THREADS*ITEMS
// elements of a row of x[M, N] (a tile never crosses a row; blockIdx.y is the row; thread k owns
// ITEMS consecutive elements of its tile):
//   1. tile_sum[m, t] = sum of tile t of row m                          (cub BlockReduce)
//   2. tile_sum[m, t] <- exclusive prefix of row m's tile sums, in place (one CTA per row, cub BlockScan)
//   3. y = tile_sum[m, t] + inclusive scan within the tile              (cub BlockScan)
// Correct for any M and N. Left slow on purpose: x is read twice (8 of the 12 bytes per element moved
// are needed), the single-CTA middle launch idles the GPU, and loads are scalar. A single pass with
// decoupled look-back reads x once.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

// Thread k's ITEMS consecutive elements of tile `tile` of the row that starts at `row`, zero past
// the end of the row.
__device__ void load_items(const float* row, long long tile, int N, float (&items)[ITEMS]) {
  const long long first = tile * (THREADS * ITEMS) + static_cast<long long>(threadIdx.x) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) items[k] = first + k < N ? row[first + k] : 0.f;
}

extern "C" __global__ void __launch_bounds__(THREADS)
cumsum_seed_tile_sums(const float* __restrict__ x, float* __restrict__ tile_sum, int N) {  // x[M, N], tile_sum[M, tiles]
  using BlockReduce = cub::BlockReduce<float, THREADS>;
  __shared__ typename BlockReduce::TempStorage temp;
  float items[ITEMS];
  load_items(x + static_cast<long long>(blockIdx.y) * N, blockIdx.x, N, items);
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) sum += items[k];
  sum = BlockReduce(temp).Sum(sum);
  if (threadIdx.x == 0) tile_sum[static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x] = sum;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
cumsum_seed_scan_sums(float* __restrict__ tile_sum, int tiles) {  // [M, tiles], in place
  using BlockScan = cub::BlockScan<float, SCAN_THREADS>;
  __shared__ typename BlockScan::TempStorage temp;
  tile_sum += static_cast<long long>(blockIdx.x) * tiles;  // CTA m scans row m's tile sums
  // Thread k owns tiles [k*per, (k+1)*per): sum them, scan the chunk sums, rewrite as prefixes.
  const int per = (tiles + SCAN_THREADS - 1) / SCAN_THREADS;
  const int begin = threadIdx.x * per;
  const int end = min(begin + per, tiles);
  float chunk = 0.f;
  for (int t = begin; t < end; ++t) chunk += tile_sum[t];
  float running;
  BlockScan(temp).ExclusiveSum(chunk, running);
  for (int t = begin; t < end; ++t) {
    const float s = tile_sum[t];
    tile_sum[t] = running;
    running += s;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
cumsum_seed_scan_tiles(const float* __restrict__ x,         // [M, N]
                       const float* __restrict__ tile_sum,  // [M, tiles] exclusive prefixes within the row (launch 2)
                       float* __restrict__ y,               // [M, N]
                       int N) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  __shared__ typename BlockScan::TempStorage temp;
  const long long row_start = static_cast<long long>(blockIdx.y) * N;  // offset of this row in x and y
  float items[ITEMS];
  load_items(x + row_start, blockIdx.x, N, items);
  float mine = 0.f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) mine += items[k];
  float before;  // sum of the elements of this tile owned by lower threads
  BlockScan(temp).ExclusiveSum(mine, before);
  float running = tile_sum[static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x] + before;
  const long long first = static_cast<long long>(blockIdx.x) * (THREADS * ITEMS) + static_cast<long long>(threadIdx.x) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    running += items[k];
    if (first + k < N) y[row_start + first + k] = running;
  }
}
