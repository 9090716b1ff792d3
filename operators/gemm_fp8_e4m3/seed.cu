/* forgek
{
  "name": "gemm_fp8_e4m3_seed",
  "mechanisms": ["cp_async", "mma_sync"],
  "params": {"BM": 128, "BN": 128, "BK": 64, "WM": 64, "WN": 32, "STAGES": 4},
  "let": {"threads": "(BM/WM)*(BN/WN)*32",
          "smem_bytes": "STAGES*(BM + BN)*BK"},
  "constraints": ["BM % WM == 0", "BN % WN == 0", "BK % 32 == 0",
                  "(BM*BK/16) % threads == 0", "(BN*BK/16) % threads == 0",
                  "smem_bytes <= 232448",
                  "N % BN == 0", "K % BK == 0"],
  "launches": [
    {"kernel": "gemm_fp8_mma_sync",
     "grid": ["N / BN", "ceil_div(M, BM)"], "block": ["threads"],
     "smem": "smem_bytes",
     "args": ["A", "B", "scale_a", "scale_b", "C", "M", "N", "K"]}
  ]
}
*/
// Seed for gemm_fp8_e4m3: an Ampere-style fp8 tensor-core GEMM (mma.sync.m16n8k32 with e4m3
// operands, available since sm_89). C[M,N] = scale_a * scale_b * (A[M,K] · B[N,K]^T), fp32
// accumulators, bf16 out.
//
// Both operands are K-contiguous ([M,K] and [N,K]), which is exactly the mma's "row.col" layout, so
// both tiles are loaded by plain (non-transposed) ldmatrix: an 8x8 matrix of b16 is 8 rows of
// 16 bytes = 16 e4m3 values, and ldmatrix hands lane l the 4 bytes at row l/4, bytes 4*(l%4) — the
// m16n8k32 fragment layout. A block computes a BM x BN tile of C; its warps form a (BM/WM) x
// (BN/WN) grid, each WM x WN. K advances BK (bytes = elements) at a time through a STAGES-deep
// cp.async ring. A plain starting point: no TMA, no wgmma (whose fp8 form is Hopper's fast path),
// no warp specialisation, no L2-aware tile order.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <forgek/cp_async.cuh>
#include <forgek/mma.cuh>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define MI (WM / 16)       // m16 fragments per warp tile
#define NI (WN / 8)        // n8 fragments per warp tile
#define CHUNKS (BK / 16)   // 16-byte chunks in one row of either tile

// Chunk c of row r is stored at chunk c ^ f(r) so that ldmatrix's 8 row reads (one 16-byte chunk
// from each of 8 consecutive rows) hit 8 different 16-byte bank groups.
__device__ __forceinline__ int swizzle_chunk(int row, int chunk)
{
  if (CHUNKS >= 8) return chunk ^ (row & 7);
  return chunk ^ ((row / (8 / CHUNKS)) % CHUNKS);  // rows shorter than 128 B share a line
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_fp8_mma_sync(const __nv_fp8_e4m3* __restrict__ A,  // [M, K] row-major
                  const __nv_fp8_e4m3* __restrict__ B,  // [N, K] row-major (row n = output column n)
                  const float* __restrict__ scale_a,    // [1]
                  const float* __restrict__ scale_b,    // [1]
                  __nv_bfloat16* __restrict__ C,        // [M, N] row-major
                  int M, int N, int K)
{
  extern __shared__ __align__(128) unsigned char smem[];
  // STAGES x A tile [BM][BK] bytes, then STAGES x B tile [BN][BK] bytes; chunks swizzled.
  unsigned char* const sA = smem;
  unsigned char* const sB = smem + STAGES * BM * BK;
  const unsigned char* const gA = reinterpret_cast<const unsigned char*>(A);
  const unsigned char* const gB = reinterpret_cast<const unsigned char*>(B);

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = K / BK;

  auto load_tile = [&](int kt, int slot) {
    unsigned char* a = sA + slot * BM * BK;
    unsigned char* b = sB + slot * BN * BK;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; ++i) {  // A[m0 .. m0+BM, k0 .. k0+BK)
      const int e = tid + i * THREADS, r = e / CHUNKS, c = e % CHUNKS;
      const bool in_m = m0 + r < M;
      const unsigned char* src = in_m ? gA + (size_t)(m0 + r) * K + k0 + c * 16 : gA;
      fk::cp_async_cg_16(a + r * BK + swizzle_chunk(r, c) * 16, src, in_m ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < BN * CHUNKS / THREADS; ++i) {  // B[n0 .. n0+BN, k0 .. k0+BK)
      const int e = tid + i * THREADS, r = e / CHUNKS, c = e % CHUNKS;
      fk::cp_async_cg_16(b + r * BK + swizzle_chunk(r, c) * 16, gB + (size_t)(n0 + r) * K + k0 + c * 16, 16);
    }
  };

  float acc[MI][NI][4] = {};

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    fk::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    fk::cp_async_wait<STAGES - 2>();  // k-tile kt has landed for this thread ...
    __syncthreads();                  // ... and for all; slot (kt-1)%STAGES is free to refill
    {
      const int next = kt + STAGES - 1;
      if (next < k_tiles) load_tile(next, next % STAGES);
      fk::cp_async_commit();
    }

    const unsigned char* a = sA + (kt % STAGES) * BM * BK;
    const unsigned char* b = sB + (kt % STAGES) * BN * BK;
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {  // one k32 mma step = two 16-byte chunks
      unsigned af[MI][4], bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {  // matrices: (m0-7,k0-15) (m8-15,k0-15) (m0-7,k16-31) (m8-15,k16-31)
        const int r = warp_m * WM + mi * 16 + lane % 16, c = kk * 2 + lane / 16;
        fk::ldmatrix_x4(af[mi], a + r * BK + swizzle_chunk(r, c) * 16);
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {  // matrices: (n0-7,k0-15) (n0-7,k16-31) (n8-15,k0-15) (n8-15,k16-31)
        const int r = warp_n * WN + nj * 16 + lane % 8 + 8 * (lane / 16), c = kk * 2 + (lane / 8) % 2;
        unsigned t[4];
        fk::ldmatrix_x4(t, b + r * BK + swizzle_chunk(r, c) * 16);
        bf[2 * nj][0] = t[0];
        bf[2 * nj][1] = t[1];
        bf[2 * nj + 1][0] = t[2];
        bf[2 * nj + 1][1] = t[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) fk::mma_m16n8k32_e4m3(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }
  fk::cp_async_wait<0>();

  // Epilogue: scale the fp32 sums once; fragment element (lane/4 [+8], 2*(lane%4) + {0,1}).
  const float scale = scale_a[0] * scale_b[0];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m * WM + mi * 16 + lane / 4 + 8 * h;
        const int col = n0 + warp_n * WN + ni * 8 + 2 * (lane % 4);
        if (row < M)
          *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
              __floats2bfloat162_rn(scale * acc[mi][ni][2 * h], scale * acc[mi][ni][2 * h + 1]);
      }
}
