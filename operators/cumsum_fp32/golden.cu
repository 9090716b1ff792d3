/* forgek
{
  "name": "cumsum_golden_fp64",
  "params": {"TILE": 1024},
  "let": {"tiles": "ceil_div(N, TILE)"},
  "workspaces": [
    {"name": "tile_sum",    "bytes": "8*M*tiles", "zero": false},
    {"name": "tile_offset", "bytes": "8*M*tiles", "zero": false}
  ],
  "launches": [
    {"kernel": "cumsum_golden_tile_sums",    "grid": ["tiles", "M"], "block": ["TILE"], "args": ["x", "tile_sum", "N"]},
    {"kernel": "cumsum_golden_tile_offsets", "grid": ["M"],          "block": ["TILE"], "args": ["tile_sum", "tile_offset", "tiles"]},
    {"kernel": "cumsum_golden_scan_tiles",   "grid": ["tiles", "M"], "block": ["TILE"], "args": ["x", "tile_offset", "y", "N"]}
  ]
}
*/
// The truth for cumsum_fp32: y[m, j] = x[m, 0] + ... + x[m, j] for each row m of x[M, N], every
// sum in fp64, each y rounded once to fp32. Reduce-then-scan in three launches over tiles of TILE
// elements of a row (one element per thread; a tile never crosses a row, blockIdx.y is the row):
//   1. tile_sum[m, t]    = sum of tile t of row m                          (fp64 shared-memory tree)
//   2. tile_offset[m, t] = tile_sum[m, 0] + ... + tile_sum[m, t-1]         (one CTA per row: chunks, then a scan)
//   3. y[m, j]           = tile_offset[m, t] + inclusive scan within tile t (fp64 Hillis-Steele scan)
// fp64 rounding (2^-53 relative per add, ~2^18 adds on the longest path) stays ~1e-11 relative,
// far below the fp32 ulp of the output. THREADS = TILE must be a power of two.

// Inclusive Hillis-Steele scan of one double per thread over the CTA (TILE threads).
__device__ double cta_inclusive_scan(double value) {
  __shared__ double buf[TILE];  // [TILE] running prefix sums
  buf[threadIdx.x] = value;
  __syncthreads();
  for (int step = 1; step < TILE; step *= 2) {
    const double add = threadIdx.x >= step ? buf[threadIdx.x - step] : 0.0;
    __syncthreads();  // everyone has read before anyone writes
    buf[threadIdx.x] += add;
    __syncthreads();
  }
  return buf[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(TILE)
cumsum_golden_tile_sums(const float* __restrict__ x,  // [M, N]
                        double* __restrict__ tile_sum,  // [M, tiles]
                        int N) {
  const long long row = blockIdx.y;
  const long long j = static_cast<long long>(blockIdx.x) * TILE + threadIdx.x;  // column
  const double v = j < N ? static_cast<double>(x[row * N + j]) : 0.0;
  const double inclusive = cta_inclusive_scan(v);
  if (threadIdx.x == TILE - 1) tile_sum[row * gridDim.x + blockIdx.x] = inclusive;  // the whole tile
}

extern "C" __global__ void __launch_bounds__(TILE)
cumsum_golden_tile_offsets(const double* __restrict__ tile_sum,  // [M, tiles]
                           double* __restrict__ tile_offset,     // [M, tiles] exclusive prefix within the row
                           int tiles) {
  // CTA m scans row m's tiles.
  tile_sum += static_cast<long long>(blockIdx.x) * tiles;
  tile_offset += static_cast<long long>(blockIdx.x) * tiles;
  // Thread k owns the contiguous chunk [k*per, (k+1)*per) of tiles: sum it, scan the chunk sums
  // across the CTA, then walk the chunk again writing exclusive prefixes.
  const int per = (tiles + TILE - 1) / TILE;
  const int begin = threadIdx.x * per;
  const int end = min(begin + per, tiles);
  double chunk = 0.0;
  for (int t = begin; t < end; ++t) chunk += tile_sum[t];
  double running = cta_inclusive_scan(chunk) - chunk;  // exclusive: the chunks before this one
  for (int t = begin; t < end; ++t) {
    tile_offset[t] = running;
    running += tile_sum[t];
  }
}

extern "C" __global__ void __launch_bounds__(TILE)
cumsum_golden_scan_tiles(const float* __restrict__ x,             // [M, N]
                         const double* __restrict__ tile_offset,  // [M, tiles]
                         float* __restrict__ y,                   // [M, N]
                         int N) {
  const long long row = blockIdx.y;
  const long long j = static_cast<long long>(blockIdx.x) * TILE + threadIdx.x;  // column
  const double v = j < N ? static_cast<double>(x[row * N + j]) : 0.0;
  const double inclusive = cta_inclusive_scan(v);
  if (j < N) y[row * N + j] = static_cast<float>(tile_offset[row * gridDim.x + blockIdx.x] + inclusive);
}
