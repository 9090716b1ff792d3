/* forgek
{
  "name": "transpose_tma_tile_pairs",
  "archs": ["sm90"],
  "mechanisms": ["tma", "tma_store", "smem_tile_transpose", "smem_swizzle", "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["TILES"], "raster": ["GROUP"],
               "cache_hint": ["EVICT_FIRST"]},
  "params": {"THREADS": [128, 64, 256], "TILES": [1, 2, 4], "GROUP": [1, 16], "EVICT_FIRST": [0, 1]},
  "let": {"band_rows": "64*TILES", "smem_bytes": "2*TILES*8192 + 1024"},
  "constraints": ["N % 64 == 0", "M % band_rows == 0", "(4*TILES) % (THREADS/32) == 0"],
  "tensor_maps": [
    {"name": "tm_in", "tensor": "in", "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tm_out", "tensor": "out", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "transpose_tma_tile_pairs",
     "grid": ["(N/64)*(M/band_rows)"], "block": ["THREADS"], "smem": "smem_bytes",
     "args": ["tm_in", "tm_out", "M", "N"]}
  ]
}
*/
// bf16 transpose with no per-thread global access: TMA loads 64 x 64 tiles into shared memory,
// warps transpose them shared -> shared two columns at a time, TMA stores the transposed tiles.
//
// CTA work: a band of TILES 64 x 64 tiles stacked along the input rows (raster as in
// smem_tile_swizzled.cu: GROUP bands per group, band index fastest):
//   in [64*TILES rows, 64 cols] at (row0, col0)  ->  out [64 rows, 64*TILES cols] at (col0, row0)
// Shared memory (1024-aligned, TMA 128B swizzle: 16-byte chunk c of row r at slot c ^ (r % 8)):
//   in_tile [TILES][64 in rows][64 in cols]    (8 KiB each, written by TMA)
//   out_tile[TILES][64 out rows][64 out cols]  (8 KiB each, read by TMA)
// One thread arms the mbarrier with every tile's bytes and issues all TILES loads at once (the
// bytes in flight), everyone waits on the barrier, then a warp work item = (tile t, row groups
// g in {2gp, 2gp+1}) in two steps:
//   lane l owns input columns 2l, 2l+1 (one 4-byte word per row): it reads the 8 words of rows
//   8g .. 8g+7 and splits them with byte permutes into two 16-byte vectors: chunk g of output
//   rows 2l and 2l+1. Half the shared reads of a 2-byte gather.
//   Banks, reads: word of (row 8g+k, column pair l) sits at bank 4*((l/4) ^ k) + l%4, distinct for
//   the 32 lanes whatever g each lane has. Writes (16 B, 8 lanes per phase): output row o = 2l
//   (+1), chunk g at slot g ^ (o % 8); lanes 0-3 and 4-7 of a phase take the two row groups in
//   opposite order (g's low bit = bit 2 of the lane ^ step), so the 8 slots differ: no conflicts.
// Then a proxy fence, a barrier, and one thread TMA-stores the out tiles and waits until they are
// read before the CTA (and its shared memory) goes away.
#include <forgek/mbarrier.cuh>
#include <forgek/mma_gemm_tile.cuh>
#include <forgek/tma.cuh>

constexpr int kTile = 64;                   // tile side (elements); a row is 128 B = the swizzle span
constexpr int kTileBytes = kTile * kTile * 2;
constexpr int kWarps = THREADS / 32;

extern "C" __global__ void __launch_bounds__(THREADS)
transpose_tma_tile_pairs(const __grid_constant__ CUtensorMap tm_in,   // in  [M, N], box [64, 64]
                         const __grid_constant__ CUtensorMap tm_out,  // out [N, M], box [64, 64]
                         int M, int N) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full;  // the TMA loads' barrier (one phase)
  // The 128B swizzle repeats every 1024 bytes: align the tiles to that (smem_bytes has the slack).
  unsigned char* smem = smem_raw + ((1024 - (fk::cvta_to_shared(smem_raw) & 1023)) & 1023);
  unsigned char* in_tile = smem;                        // [TILES][64][64] bf16
  unsigned char* out_tile = smem + TILES * kTileBytes;  // [TILES][64][64] bf16

  // Raster: CTA id -> (band by, tile column bx), GROUP bands per group, band index fastest.
  int by, bx;
  fk::grouped_raster(blockIdx.x, GROUP, M / (kTile * TILES), N / kTile, &by, &bx);
  const int row0 = by * kTile * TILES, col0 = bx * kTile;

  if (threadIdx.x == 0) {
    fk::mbar_init(&full, 1);
    fk::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    fk::mbar_arrive_expect_tx(&full, TILES * kTileBytes);
#if EVICT_FIRST
    const unsigned long long policy = fk::policy_evict_first();  // in is read exactly once
#endif
#pragma unroll
    for (int t = 0; t < TILES; ++t) {
#if EVICT_FIRST
      fk::tma_load_2d_hint(in_tile + t * kTileBytes, &tm_in, &full, col0, row0 + kTile * t, policy);
#else
      fk::tma_load_2d(in_tile + t * kTileBytes, &tm_in, &full, col0, row0 + kTile * t);
#endif
    }
  }
  fk::mbar_wait(&full, 0);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int word = 4 * (lane % 4);  // byte offset of columns 2l, 2l+1 inside their 16-byte chunk
#pragma unroll 1
  for (int item = warp; item < TILES * 4; item += kWarps) {
    const int t = item / 4, gp = item % 4;
    const unsigned char* src = in_tile + t * kTileBytes;
    unsigned char* dst = out_tile + t * kTileBytes;
#pragma unroll
    for (int step = 0; step < 2; ++step) {
      const int g = 2 * gp + (((lane >> 2) & 1) ^ step);  // input rows 8g .. 8g+7 = output chunk g
      unsigned w[8];                                      // w[k]: columns 2l, 2l+1 of row 8g+k
#pragma unroll
      for (int k = 0; k < 8; ++k)
        w[k] = *reinterpret_cast<const unsigned*>(src + (8 * g + k) * 128 + 16 * ((lane / 4) ^ k) + word);
      // Low halves = column 2l, high halves = column 2l+1; element k of a chunk = input row 8g+k.
      const uint4 even = make_uint4(__byte_perm(w[0], w[1], 0x5410), __byte_perm(w[2], w[3], 0x5410),
                                    __byte_perm(w[4], w[5], 0x5410), __byte_perm(w[6], w[7], 0x5410));
      const uint4 odd = make_uint4(__byte_perm(w[0], w[1], 0x7632), __byte_perm(w[2], w[3], 0x7632),
                                   __byte_perm(w[4], w[5], 0x7632), __byte_perm(w[6], w[7], 0x7632));
      const int o0 = 2 * lane, o1 = 2 * lane + 1;  // output rows (tile columns)
      *reinterpret_cast<uint4*>(dst + o0 * 128 + 16 * fk::swizzle_xor(o0, g)) = even;
      *reinterpret_cast<uint4*>(dst + o1 * 128 + 16 * fk::swizzle_xor(o1, g)) = odd;
    }
  }

  fk::fence_proxy_async_smem();  // each writer orders its shared writes before the TMA reads
  __syncthreads();
  if (threadIdx.x == 0) {
#pragma unroll
    for (int t = 0; t < TILES; ++t)
      fk::tma_store_2d(&tm_out, out_tile + t * kTileBytes, row0 + kTile * t, col0);  // (out col, out row)
    fk::bulk_commit();
    fk::bulk_wait_read<0>();  // shared memory must outlive the store's reads
  }
}
