/* forgek
{
  "name": "transpose_smem_tile64_swizzled",
  "mechanisms": ["vector_16B", "smem_tile_transpose", "smem_swizzle", "streaming_store"],
  "params": {"TILE": 64, "THREADS": 256},
  "constraints": ["M % TILE == 0", "N % TILE == 0"],
  "launches": [
    {"kernel": "transpose_bf16_reference", "grid": ["N/TILE", "M/TILE"], "block": ["THREADS"],
     "args": ["in", "out", "M", "N"]}
  ]
}
*/
// Expert bf16 transpose: 64 x 64 tiles through shared memory, 16-byte global loads AND stores.
//
// CTA (bx, by) owns in[64*by .. +64, 64*bx .. +64) and writes out[64*bx .. +64, 64*by .. +64).
//   load:  thread idx (0..511, two per thread) reads row r = idx / 8, 16-byte chunk c8 = idx % 8
//          of the tile (8 threads read one 128-byte row segment) and stores it to shared memory.
//   store: thread idx writes output row c = idx / 8 (a column of the tile) at input rows
//          8*(idx % 8) .. +8: it gathers those 8 bf16 from shared memory (one column, 8 rows),
//          packs them into 16 bytes and writes them; 8 threads fill one 128-byte output segment.
// Shared-memory layout: row r of the tile is 128 bytes; its 16-byte chunk c8 is stored at slot
// c8 ^ (r / 8). Writes: the 8 threads of a quarter-warp store one row, slots a permutation of
// 0..7, so all 32 banks once. Reads: a warp reads, for one k, rows 8*g + k (g = 0..7) of 4
// adjacent columns; row group g lands in slot (c / 8) ^ g, eight different slots, so the 32
// lanes touch 16 distinct banks, lanes sharing a bank sharing its 4-byte word: no conflicts.
// 8 KiB of shared memory and 8 KiB of loads in flight per CTA, 8 CTAs per SM.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(THREADS)
transpose_bf16_reference(const __nv_bfloat16* __restrict__ in,  // [M, N]
                         __nv_bfloat16* __restrict__ out,       // [N, M]
                         int M, int N) {
  constexpr int kChunks = TILE / 8;                 // 16-byte chunks per tile row (8)
  constexpr int kVectors = TILE * kChunks;          // 16-byte vectors per tile (512)
  constexpr int kPerThread = kVectors / THREADS;    // 2
  static_assert(kVectors % THREADS == 0, "every thread moves the same number of vectors");
  static_assert(kChunks == 8, "the swizzle below assumes 8 chunks per row and 8-row groups");
  __shared__ __align__(16) unsigned short tile[TILE * TILE];  // [TILE rows][TILE cols], swizzled chunks

  const int row0 = blockIdx.y * TILE;  // first input row of the tile
  const int col0 = blockIdx.x * TILE;  // first input column of the tile

  uint4 v[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int r = idx / kChunks, c8 = idx % kChunks;
    v[i] = __ldcs(reinterpret_cast<const uint4*>(in + static_cast<size_t>(row0 + r) * N + col0 + 8 * c8));
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int r = idx / kChunks, c8 = idx % kChunks;
    *reinterpret_cast<uint4*>(&tile[r * TILE + 8 * (c8 ^ (r / 8))]) = v[i];
  }
  __syncthreads();

#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = i * THREADS + threadIdx.x;
    const int c = idx / kChunks;      // tile column = output row within the tile
    const int g = idx % kChunks;      // input rows 8g .. 8g+7 = output columns
    const int slot = (c / 8) ^ g;     // the chunk slot of column c in every row of group g
    const unsigned short* col = &tile[(8 * g) * TILE + 8 * slot + c % 8];
    uint4 packed;
    packed.x = col[0 * TILE] | (static_cast<unsigned>(col[1 * TILE]) << 16);
    packed.y = col[2 * TILE] | (static_cast<unsigned>(col[3 * TILE]) << 16);
    packed.z = col[4 * TILE] | (static_cast<unsigned>(col[5 * TILE]) << 16);
    packed.w = col[6 * TILE] | (static_cast<unsigned>(col[7 * TILE]) << 16);
    __stcs(reinterpret_cast<uint4*>(out + static_cast<size_t>(col0 + c) * M + row0 + 8 * g), packed);
  }
}
