/* forgek
{
  "name": "wgmma_rs_pv_fk",
  "archs": ["sm90"],
  "tensor_maps": [
    {"name": "tmB", "tensor": "B", "box": ["64", "64"], "swizzle": "128B"}
  ],
  "launches": [
    {"kernel": "wgmma_rs_pv_fk", "grid": ["G"], "block": [128], "smem": "16384 + 1024", "args": ["A", "tmB", "C"]}
  ]
}
*/
// One warpgroup per 64-row block g: A[64g .. 64g+64, 0..64) is read from global memory straight into
// registers as mma.m16n8k16 A fragments (warp w: rows 16w..16w+15), B comes by TMA as two 64-column panels
// ([2][64 k][64 n], N-major, 128B swizzle, the layout of V in the attention families); four register-A wgmma
// m64n128k16 steps (the first with scale-d = 0) compute the tile, and each thread stores its accumulators.
#include <cuda_bf16.h>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/wgmma.cuh>

extern "C" __global__ void __launch_bounds__(128)
wgmma_rs_pv_fk(const __nv_bfloat16* A, const __grid_constant__ CUtensorMap tmB, float* C)
{
  extern __shared__ unsigned char smem_raw[];
  unsigned char* const sB = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);  // 128B swizzle atoms: 1024-aligned
  __shared__ __align__(8) unsigned long long bar;
  const int t = threadIdx.x, w = t / 32, g = (t % 32) / 4, q = t % 4;
  if (t == 0) {
    fk::mbar_init(&bar, 1);
    fk::fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    fk::mbar_arrive_expect_tx(&bar, 16384);
    fk::tma_load_2d(sB, &tmB, &bar, 0, 0);
    fk::tma_load_2d(sB + 8192, &tmB, &bar, 64, 0);
  }
  // A fragment of k16 step ks: {row g, k 2q..}, {row g+8, k 2q..}, {row g, k 8+2q..}, {row g+8, k 8+2q..}.
  unsigned a[4][4];
  const unsigned* const rows = reinterpret_cast<const unsigned*>(A + (size_t)(blockIdx.x * 64 + w * 16) * 64);
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    a[ks][0] = rows[(g * 64 + ks * 16 + 2 * q) / 2];
    a[ks][1] = rows[((g + 8) * 64 + ks * 16 + 2 * q) / 2];
    a[ks][2] = rows[(g * 64 + ks * 16 + 8 + 2 * q) / 2];
    a[ks][3] = rows[((g + 8) * 64 + ks * 16 + 8 + 2 * q) / 2];
  }
  fk::mbar_wait(&bar, 0);

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 12345.0f;  // overwritten by the scale-d = 0 step
  fk::wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)  // B: 16 k rows = 2048 B
    fk::wgmma_m64k16_bf16_rs<128>(acc, a[ks], fk::wgmma_desc_nmajor_128b(sB + ks * 2048, 8192), ks == 0 ? 0 : 1);
  fk::wgmma_commit();
  fk::wgmma_wait<0>();
  fk::wgmma_fence_acc<64>(acc);
#pragma unroll
  for (int i = 0; i < 64; ++i)
    C[(size_t)(blockIdx.x * 64 + fk::wgmma_acc_row(i, t)) * 128 + fk::wgmma_acc_col(i, t)] = acc[i];
}
