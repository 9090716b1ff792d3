/* forgek
{
  "name": "transpose_smem_tile_swizzled",
  "mechanisms": ["vector_16B", "smem_tile_transpose", "smem_swizzle", "streaming_store",
                 "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["TILES"], "raster": ["GROUP"],
               "cache_hint": ["LOAD_CS"], "streaming_store": ["STORE_CS"]},
  "params": {"THREADS": [256, 128, 512], "TILES": [1, 2, 4], "GROUP": [1, 16],
             "LOAD_CS": [1, 0], "STORE_CS": [1, 0]},
  "let": {"band_rows": "64*TILES", "tiles_x": "N/64", "tiles_y": "M/band_rows"},
  "constraints": ["N % 64 == 0", "M % band_rows == 0", "(512*TILES) % THREADS == 0"],
  "launches": [
    {"kernel": "transpose_smem_tile_swizzled",
     "grid": ["tiles_x*tiles_y"], "block": ["THREADS"],
     "args": ["in", "out", "M", "N"]}
  ]
}
*/
// bf16 transpose through XOR-swizzled shared-memory tiles (the reference's design), with its knobs
// as params: CTA size, tiles per CTA (bytes in flight), CTA raster order and load/store cache hints.
//
// CTA work: a band of TILES 64 x 64 tiles stacked along the input rows:
//   in [64*TILES rows, 64 cols] at (row0, col0)  ->  out [64 rows, 64*TILES cols] at (col0, row0)
// so each output row gets 128*TILES contiguous bytes from one CTA.
// Every thread issues all its 16-byte loads (512*TILES/THREADS of them) before its first shared
// store: that many bytes in flight per thread, the memory-level parallelism TILES sets.
// Shared layout per tile t: [64 rows][8 chunks of 16 B], chunk c8 of row r at slot c8 ^ (r / 8)
// (bank-conflict-free both ways; see reference.cu for the proof, the mapping inside a tile is its).
// Raster: CTAs are numbered in groups of GROUP bands; inside a group the band index runs fastest,
// so the CTAs resident at one time cover a GROUP x k block of tiles: output rows then receive
// GROUP*128*TILES contiguous bytes at about the same time (DRAM page locality for the writes,
// which a row-major raster spreads over every output row). GROUP 1 is the reference's order.
#include <forgek/mma_gemm_tile.cuh>
#include <forgek/vec.cuh>

constexpr int kTile = 64;                        // tile side (elements)
constexpr int kChunks = kTile / 8;               // 16-byte chunks per tile row (8)
constexpr int kTileVectors = kTile * kChunks;    // 16-byte vectors per tile (512)
constexpr int kPerThread = kTileVectors * TILES / THREADS;
static_assert(kTileVectors * TILES % THREADS == 0, "every thread moves the same number of vectors");

// in is read exactly once: LOAD_CS 1 evict-first, 0 the read-only path; out is never read back:
// STORE_CS 1 streams it.
constexpr fk::LoadHint kLoadIn = LOAD_CS ? fk::LoadHint::cs : fk::LoadHint::nc;
constexpr fk::StoreHint kStoreOut = STORE_CS ? fk::StoreHint::cs : fk::StoreHint::plain;

extern "C" __global__ void __launch_bounds__(THREADS)
transpose_smem_tile_swizzled(const __nv_bfloat16* __restrict__ in,  // [M, N]
                             __nv_bfloat16* __restrict__ out,       // [N, M]
                             int M, int N) {
  __shared__ __align__(16) unsigned short tile[TILES][kTile * kTile];  // [TILES][64 rows][64 cols], swizzled chunks

  // Raster: CTA id -> (band by, tile column bx), GROUP bands per group, band index fastest.
  int by, bx;
  fk::grouped_raster(blockIdx.x, GROUP, M / (kTile * TILES), N / kTile, &by, &bx);

  const int row0 = by * kTile * TILES;  // first input row of the band
  const int col0 = bx * kTile;          // first input column

  // Phase 1: every load issued before any shared store. Vector idx: tile t = idx / 512, then
  // row r = (idx % 512) / 8 and chunk c8 = idx % 8 of that tile (8 threads read 128 B of a row).
  uint4 v[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int t = idx / kTileVectors, r = (idx % kTileVectors) / kChunks, c8 = idx % kChunks;
    const __nv_bfloat16* src = in + static_cast<size_t>(row0 + kTile * t + r) * N + col0 + 8 * c8;
    v[i] = fk::load<kLoadIn>(reinterpret_cast<const uint4*>(src));
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int t = idx / kTileVectors, r = (idx % kTileVectors) / kChunks, c8 = idx % kChunks;
    *reinterpret_cast<uint4*>(&tile[t][r * kTile + 8 * (c8 ^ (r / 8))]) = v[i];
  }
  __syncthreads();

  // Phase 2: vector idx of tile t: output row c = (idx % 512) / 8 (a tile column), input rows
  // 8g .. 8g+7 with g = idx % 8: gathered from one column of shared memory, packed, stored.
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int t = idx / kTileVectors, c = (idx % kTileVectors) / kChunks, g = idx % kChunks;
    const int slot = (c / 8) ^ g;  // the chunk slot of column c in every row of group g
    const unsigned short* col = &tile[t][(8 * g) * kTile + 8 * slot + c % 8];
    uint4 packed;
    packed.x = col[0 * kTile] | (static_cast<unsigned>(col[1 * kTile]) << 16);
    packed.y = col[2 * kTile] | (static_cast<unsigned>(col[3 * kTile]) << 16);
    packed.z = col[4 * kTile] | (static_cast<unsigned>(col[5 * kTile]) << 16);
    packed.w = col[6 * kTile] | (static_cast<unsigned>(col[7 * kTile]) << 16);
    __nv_bfloat16* dst = out + static_cast<size_t>(col0 + c) * M + row0 + kTile * t + 8 * g;
    fk::store<kStoreOut>(reinterpret_cast<uint4*>(dst), packed);
  }
}
