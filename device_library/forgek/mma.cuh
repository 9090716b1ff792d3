// forgek/mma.cuh: warp-level tensor-core MMA (mma.sync, sm_80+) and ldmatrix (namespace fk). All 32
// lanes of the warp call each function. Fragments follow PTX's m16n8k16 layouts: with g = lane/4,
// t = lane%4, accumulator c[0..1] is row g, columns 2t, 2t+1 and c[2..3] row g+8.
//   fk::ldmatrix_x4(unsigned (&r)[4], const void* p)       — four 8x8 b16 matrices; lane l gives row l%8 of matrix l/8
//   fk::ldmatrix_x4_trans(unsigned (&r)[4], const void* p) — the same, each matrix transposed
//   fk::stmatrix_x4(void* p, const unsigned (&r)[4])     — the reverse of ldmatrix_x4 (sm_90): r[i] of lane l
//        is row l/4, columns 2(l%4), +1 of matrix i; lane l gives the address of row l%8 of matrix l/8
//   fk::mma_m16n8k16_bf16(float* d, const unsigned* a, unsigned b0, unsigned b1) — d[4] += A(16x16) · B(16x8), fp32 acc
//   fk::mma_m16n8k32_e4m3(float* d, const unsigned* a, unsigned b0, unsigned b1) — d[4] += A(16x32) · B(32x8), fp8 e4m3
//   fk::c_to_a_bf16(unsigned (&a)[4], const float* c0, const float* c1) — two n8 accumulators (columns
//        0-7, 8-15) -> the m16k16 A fragment of the same 16x16 block, rounded to bf16
// On a row-major bf16 shared tile [rows][Ld] (Ld % 64 == 0) whose 16-byte chunks are XOR-swizzled
// (chunk c of row r at c ^ (r & 7), see cp_async_tile_xor):
//   fk::ldmatrix_a_xor<Ld>(unsigned (&a)[4], const __nv_bfloat16* tile, int row0, int k16) — A fragment:
//        rows row0..+15, columns 16*k16..+15
//   fk::ldmatrix_bt_xor<Ld>(unsigned (&b)[4], tile, int n0, int k16) — tile is [n][k] (B transposed):
//        b[0..1] the B fragment of n0..n0+7, b[2..3] of n0+8..+15, k = 16*k16..+15
//   fk::ldmatrix_b_trans_xor<Ld>(unsigned (&b)[4], tile, int k0, int n16) — tile is [k][n]: b[0..1] for
//        columns 16*n16..+7, b[2..3] for +8..+15, k = k0..k0+15
//   fk::warp_mma_a_bt_xor<NTiles, KSteps, Ld>(float (&acc)[NTiles][4], const unsigned (&a)[KSteps][4], tile, int n0)
//        — acc[16 x 8*NTiles] += A[16 x 16*KSteps] · tile[n0 .. n0+8*NTiles)^T (tile [n][k]; NTiles even)
//   fk::warp_mma_a_b_xor<KTiles, NTiles, Ld>(float (&acc)[NTiles][4], const unsigned (&a)[KTiles][4], tile, int k0)
//        — acc[16 x 8*NTiles] += A[16 x 16*KTiles] · tile[k0 .. k0+16*KTiles)[0 .. 8*NTiles) (tile [k][n]; NTiles even)
#pragma once
#include <cuda_bf16.h>
#include <forgek/common.cuh>
#include <forgek/vec.cuh>

namespace fk {

// Four 8x8 b16 matrices from shared memory; lane l supplies the address of row l%8 of matrix l/8.
FK_DEVICE void ldmatrix_x4(unsigned (&r)[4], const void* p)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(cvta_to_shared(p)));
}
// Four 8x8 b16 matrices, each transposed on the way (row-major [k][n] B -> the mma's "col" B fragment).
FK_DEVICE void ldmatrix_x4_trans(unsigned (&r)[4], const void* p)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(cvta_to_shared(p)));
}
// Four 8x8 b16 matrices to shared memory, one instruction for what would be four 4-byte stores a lane.
FK_DEVICE void stmatrix_x4(void* p, const unsigned (&r)[4])
{
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(cvta_to_shared(p)), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
// d[16x8] += a[16x16] · b[16x8], bf16 in, fp32 accumulate (a: 4 regs, b: 2 regs, d: 4 floats).
FK_DEVICE void mma_m16n8k16_bf16(float* d, const unsigned* a, unsigned b0, unsigned b1)
{
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// d[16x8] += a[16x32] · b[32x8], fp8 e4m3 in, fp32 accumulate (a: 4 regs, b: 2 regs, d: 4 floats).
FK_DEVICE void mma_m16n8k32_e4m3(float* d, const unsigned* a, unsigned b0, unsigned b1)
{
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// The C fragments of two adjacent n8 tiles are the A fragment of their 16x16 block (rounded to bf16).
FK_DEVICE void c_to_a_bf16(unsigned (&a)[4], const float* c0, const float* c1)
{
  a[0] = pack_bf16x2(c0[0], c0[1]);
  a[1] = pack_bf16x2(c0[2], c0[3]);
  a[2] = pack_bf16x2(c1[0], c1[1]);
  a[3] = pack_bf16x2(c1[2], c1[3]);
}

// A fragment (rows row0..+15, k 16*k16..+15) of an XOR-swizzled row-major [rows][Ld] bf16 tile.
template <int Ld>
FK_DEVICE void ldmatrix_a_xor(unsigned (&a)[4], const __nv_bfloat16* tile, int row0, int k16)
{
  const int lane = threadIdx.x % 32;
  const int r = row0 + lane % 16, ch = k16 * 2 + lane / 16;
  ldmatrix_x4(a, tile + r * Ld + swizzle_xor(r, ch) * 8);
}
// B fragments of n0..n0+7 (b[0..1]) and n0+8..+15 (b[2..3]), k 16*k16..+15, from an XOR-swizzled [n][k] tile.
template <int Ld>
FK_DEVICE void ldmatrix_bt_xor(unsigned (&b)[4], const __nv_bfloat16* tile, int n0, int k16)
{
  const int lane = threadIdx.x % 32;
  const int r = n0 + lane % 8 + 8 * (lane / 16), ch = k16 * 2 + (lane / 8) % 2;
  ldmatrix_x4(b, tile + r * Ld + swizzle_xor(r, ch) * 8);
}
// B fragments of columns 16*n16..+7 (b[0..1]) and +8..+15 (b[2..3]), k k0..k0+15, from an XOR-swizzled [k][n] tile.
template <int Ld>
FK_DEVICE void ldmatrix_b_trans_xor(unsigned (&b)[4], const __nv_bfloat16* tile, int k0, int n16)
{
  const int lane = threadIdx.x % 32;
  const int r = k0 + lane % 16, ch = n16 * 2 + lane / 16;
  ldmatrix_x4_trans(b, tile + r * Ld + swizzle_xor(r, ch) * 8);
}
// acc[16 x 8*NTiles] += A[16 x 16*KSteps] · B with B^T rows n0 .. n0+8*NTiles of an XOR-swizzled [n][k] tile.
template <int NTiles, int KSteps, int Ld>
FK_DEVICE void warp_mma_a_bt_xor(float (&acc)[NTiles][4], const unsigned (&a)[KSteps][4], const __nv_bfloat16* tile, int n0)
{
#pragma unroll
  for (int ks = 0; ks < KSteps; ++ks)
#pragma unroll
    for (int np = 0; np < NTiles / 2; ++np) {
      unsigned b[4];
      ldmatrix_bt_xor<Ld>(b, tile, n0 + np * 16, ks);
      mma_m16n8k16_bf16(acc[2 * np], a[ks], b[0], b[1]);
      mma_m16n8k16_bf16(acc[2 * np + 1], a[ks], b[2], b[3]);
    }
}
// acc[16 x 8*NTiles] += A[16 x 16*KTiles] · B with B rows k0 .. k0+16*KTiles, columns 0 .. 8*NTiles of an XOR-swizzled [k][n] tile.
template <int KTiles, int NTiles, int Ld>
FK_DEVICE void warp_mma_a_b_xor(float (&acc)[NTiles][4], const unsigned (&a)[KTiles][4], const __nv_bfloat16* tile, int k0)
{
#pragma unroll
  for (int dp = 0; dp < NTiles / 2; ++dp)
#pragma unroll
    for (int kk = 0; kk < KTiles; ++kk) {  // each accumulator sums its k16 steps in order
      unsigned b[4];
      ldmatrix_b_trans_xor<Ld>(b, tile, k0 + kk * 16, dp);
      mma_m16n8k16_bf16(acc[2 * dp], a[kk], b[0], b[1]);
      mma_m16n8k16_bf16(acc[2 * dp + 1], a[kk], b[2], b[3]);
    }
}

}  // namespace fk
