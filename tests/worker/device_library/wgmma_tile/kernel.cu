/* forgek
{
  "name": "wgmma_tile_fk",
  "archs": ["sm90"],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["64", "64"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "wgmma_tile_fk", "grid": ["G"], "block": [128], "smem": "8192 + 16384 + 1024", "args": ["tmA", "tmB", "C"]}
  ]
}
*/
// One warpgroup per 64-row block g: TMA brings A[64g .. 64g+64, 0..64) ([64 m][64 k], K-major, 128B
// swizzle) and B as two 64-column panels ([2][64 k][64 n], N-major, 128B swizzle), the layout of the
// shipped gemm families; four wgmma m64n128k16 steps (the first with scale-d = 0) compute the tile,
// and each thread stores its accumulator fragment.
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

extern "C" __global__ void __launch_bounds__(128)
wgmma_tile_fk(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, float* C)
{
  extern __shared__ unsigned char smem_raw[];
  unsigned char* const sA = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);  // 128B swizzle atoms: 1024-aligned
  unsigned char* const sB = sA + 8192;
  __shared__ __align__(8) unsigned long long bar;
  const int t = threadIdx.x;
  if (t == 0) {
    fk::mbar_init(&bar, 1);
    fk::fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    fk::mbar_arrive_expect_tx(&bar, 8192 + 16384);
    fk::tma_load_2d(sA, &tmA, &bar, 0, blockIdx.x * 64);
    fk::tma_load_2d(sB, &tmB, &bar, 0, 0);
    fk::tma_load_2d(sB + 8192, &tmB, &bar, 64, 0);
  }
  fk::mbar_wait(&bar, 0);

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 12345.0f;  // overwritten by the scale-d = 0 step
  fk::wgmma_fence();
#pragma unroll
  for (int k16 = 0; k16 < 4; ++k16)  // A: 16 k = 32 B along a row; B: 16 k rows = 2048 B
    fk::wgmma_m64k16_bf16<128>(acc, fk::wgmma_desc_kmajor_128b(sA + k16 * 32),
                               fk::wgmma_desc_nmajor_128b(sB + k16 * 2048, 8192), k16 == 0 ? 0 : 1);
  fk::wgmma_commit();
  fk::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 64; ++i)
    C[(size_t)(blockIdx.x * 64 + fk::wgmma_acc_row(i, t)) * 128 + fk::wgmma_acc_col(i, t)] = acc[i];
}
