/* forgek
{
  "name": "attention_prefill_bf16_seed",
  "mechanisms": ["cp_async", "mma_sync", "ldmatrix", "smem_swizzle", "online_softmax"],
  "params": {"BM": 64, "BN": 32, "HEAD_DIM": 128, "MIN_BLOCKS": 1},
  "let": {"threads": "(BM/16)*32",
          "smem_bytes": "(BM + 4*BN)*HEAD_DIM*2"},
  "constraints": ["D == HEAD_DIM", "HEAD_DIM % 16 == 0", "S % BM == 0", "BM % BN == 0", "BN % 16 == 0", "(BN*HEAD_DIM/8) % threads == 0",
                  "HQ % HKV == 0", "smem_bytes <= 232448"],
  "launches": [
    {"kernel": "attention_prefill_fa2",
     "grid": ["S / BM", "HQ", "BATCH"], "block": ["threads"], "smem": "smem_bytes",
     "args": ["q", "k", "v", "o", "HQ", "HKV", "S", "softmax_scale"]}
  ]
}
*/
// Seed for attention_prefill_bf16: reference.cu's FlashAttention-2 style kernel at a small,
// untuned tile (64 queries x 32 keys, 4 warps), a starting point that leaves the Hopper mechanisms
// (TMA, wgmma, warp specialisation, larger tiles, intra-warpgroup overlap of softmax and MMA) to find.
// A causal GQA forward on mma.sync tensor cores.
//
// A block owns BM query rows of one (batch, head); each of its BM/16 warps owns 16 of them, so
// every softmax statistic of a row lives in the 4 lanes of one quad and never crosses warps. Key
// tiles of BN rows stream through shared memory (K and V double-buffered, cp.async), and for each:
//   S = Q K^T                        mma m16n8k16: Q fragments stay in registers for the whole
//                                    block; K [key][d] is d-contiguous = the mma's "col" B layout;
//   causal mask                      only on tiles that cross the diagonal;
//   online softmax                   m_new = max(m, rowmax S); P = exp2(S*c - m_new*c);
//                                    O *= exp2((m - m_new)*c); l = l*that + rowsum P (c folds
//                                    softmax_scale and log2 e into one multiply);
//   O += P V                         P goes from the S accumulators straight into A fragments (the
//                                    m16n8 C layout of two n8 tiles is the m16k16 A layout), V is
//                                    read with ldmatrix.trans.
// At the end O / l is rounded to bf16. Query tiles are taken longest-first (the last tile of the
// sequence has the most keys) so that the tail of the grid is short tiles. Warps whose 16 rows all
// precede a diagonal tile skip its math (they still help load it).
//
// Pipeline per key tile j (groups complete in order, so wait_group 1 means "all but the newest"):
//   wait K_j; barrier; S = Q K_j^T; issue K_{j+1}; softmax; wait V_j; barrier; issue V_{j+1}; O += P V_j.
// The buffer a prefetch overwrites was last read in iteration j-1, before this iteration's barrier.
#include <cuda_bf16.h>

#define WARPS (BM / 16)
#define THREADS (WARPS * 32)
#define CHUNKS (HEAD_DIM / 8)  // 16-byte chunks per row of Q, K, V tiles
#define KSTEPS (HEAD_DIM / 16) // k16 steps over the head dimension
#define DTILES (HEAD_DIM / 8)  // n8 tiles of O per warp
#define NTILES (BN / 8)        // n8 tiles of S per warp
#define NEG_INF __int_as_float(0xff800000)  // -inf (math.h is not available under NVRTC)

// Rows are 256 bytes (D = 128): XOR the chunk with the row's low 3 bits so the 8 rows one
// ldmatrix reads fall in 8 different 16-byte bank groups.
__device__ __forceinline__ int swz(int row, int chunk) { return chunk ^ (row & 7); }

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async_16(void* dst, const void* src)
{
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const void* p)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4], const void* p)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void mma_bf16_16816(float d[4], const unsigned a[4], unsigned b0, unsigned b1)
{
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi)
{
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&v);
}
// Max / sum over the 4 lanes of a quad (the lanes that share one row of an mma fragment).
__device__ __forceinline__ float quad_max(float v)
{
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v)
{
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Copies `rows` rows of HEAD_DIM bf16 (row stride HEAD_DIM) from global into a swizzled tile.
template <int ROWS>
__device__ __forceinline__ void load_rows(__nv_bfloat16* tile, const __nv_bfloat16* src)
{
#pragma unroll
  for (int i = 0; i < ROWS * CHUNKS / THREADS; ++i) {
    const int e = threadIdx.x + i * THREADS, r = e / CHUNKS, c = e % CHUNKS;
    cp_async_16(tile + r * HEAD_DIM + swz(r, c) * 8, src + (size_t)r * HEAD_DIM + c * 8);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_prefill_fa2(const __nv_bfloat16* __restrict__ q,  // [BATCH, HQ, S, D]
                      const __nv_bfloat16* __restrict__ k,  // [BATCH, HKV, S, D]
                      const __nv_bfloat16* __restrict__ v,  // [BATCH, HKV, S, D]
                      __nv_bfloat16* __restrict__ o,        // [BATCH, HQ, S, D]
                      int HQ, int HKV, int S, float softmax_scale)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* const sQ = reinterpret_cast<__nv_bfloat16*>(smem);  // [BM][D]
  __nv_bfloat16* const sK = sQ + BM * HEAD_DIM;                        // 2 x [BN][D]
  __nv_bfloat16* const sV = sK + 2 * BN * HEAD_DIM;                    // 2 x [BN][D]

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;  // mma fragment row group and column pair
  const int q_tile = gridDim.x - 1 - blockIdx.x;  // longest tiles first
  const int h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (HQ / HKV);
  const int q0 = q_tile * BM;

  const __nv_bfloat16* const qh = q + (((size_t)b * HQ + h) * S + q0) * HEAD_DIM;  // this block's [BM][D]
  const __nv_bfloat16* const kh = k + ((size_t)b * HKV + kvh) * S * HEAD_DIM;     // [S][D]
  const __nv_bfloat16* const vh = v + ((size_t)b * HKV + kvh) * S * HEAD_DIM;
  __nv_bfloat16* const oh = o + (((size_t)b * HQ + h) * S + q0) * HEAD_DIM;

  const int n_tiles = (q0 + BM - 1) / BN + 1;  // key tiles 0 .. holding the block's last query
  const float c = softmax_scale * 1.4426950408889634f;  // scores to log2 units

  // Prologue: Q and K_0 in one group, V_0 in the next.
  load_rows<BM>(sQ, qh);
  load_rows<BN>(sK, kh);
  cp_async_commit();
  load_rows<BN>(sV, vh);
  cp_async_commit();

  unsigned qf[KSTEPS][4];          // this warp's 16 query rows as A fragments, all of D
  float acc_o[DTILES][4] = {};     // O[16][D]: rows g and g+8, columns 8*j + 2t, +1
  float row_max[2] = {NEG_INF, NEG_INF}, row_sum[2] = {0.0f, 0.0f};  // rows g, g+8 (log2 units)
  const int row_lo = q0 + warp * 16 + g;  // query index of fragment row g (row g+8 is +8)

  for (int j = 0; j < n_tiles; ++j) {
    const int buf = j & 1, k0 = j * BN;
    const __nv_bfloat16* const kt = sK + buf * BN * HEAD_DIM;
    const __nv_bfloat16* const vt = sV + buf * BN * HEAD_DIM;

    cp_async_wait<1>();  // K_j (and Q) landed; V_j may still be in flight
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int ks = 0; ks < KSTEPS; ++ks) {
        const int r = warp * 16 + lane % 16, ch = ks * 2 + lane / 16;
        ldmatrix_x4(qf[ks], sQ + r * HEAD_DIM + swz(r, ch) * 8);
      }
    }
    // Warp-uniform: this warp's rows q0+16w .. +15 see some key of the tile.
    const bool active = k0 <= q0 + warp * 16 + 15;

    // S = Q K_j^T (16 x BN per warp)
    float acc_s[NTILES][4];
#pragma unroll
    for (int nt = 0; nt < NTILES; ++nt) acc_s[nt][0] = acc_s[nt][1] = acc_s[nt][2] = acc_s[nt][3] = 0.0f;
    if (active) {
#pragma unroll
      for (int ks = 0; ks < KSTEPS; ++ks)
#pragma unroll
        for (int np = 0; np < NTILES / 2; ++np) {  // (keys 0-7,d 0-7) (keys 0-7,d 8-15) (keys 8-15,d 0-7) (keys 8-15,d 8-15)
          const int r = np * 16 + lane % 8 + 8 * (lane / 16), ch = ks * 2 + (lane / 8) % 2;
          unsigned kf[4];
          ldmatrix_x4(kf, kt + r * HEAD_DIM + swz(r, ch) * 8);
          mma_bf16_16816(acc_s[2 * np], qf[ks], kf[0], kf[1]);
          mma_bf16_16816(acc_s[2 * np + 1], qf[ks], kf[2], kf[3]);
        }
    }

    // Prefetch K_{j+1} into the other buffer (last read in iteration j-1).
    if (j + 1 < n_tiles) load_rows<BN>(sK + (buf ^ 1) * BN * HEAD_DIM, kh + (size_t)(k0 + BN) * HEAD_DIM);
    cp_async_commit();

    unsigned pf[BN / 16][4];  // P as A fragments for O += P V
    if (active) {
      // Causal mask, only where the tile crosses this warp's diagonal.
      if (k0 + BN - 1 > q0 + warp * 16) {
#pragma unroll
        for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = k0 + nt * 8 + 2 * t + (e & 1), row = row_lo + 8 * (e / 2);
            if (key > row) acc_s[nt][e] = NEG_INF;
          }
      }
      // Online softmax for rows g (e = 0, 1) and g+8 (e = 2, 3).
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = NEG_INF;
#pragma unroll
        for (int nt = 0; nt < NTILES; ++nt) mx = fmaxf(mx, fmaxf(acc_s[nt][2 * hr], acc_s[nt][2 * hr + 1]));
        mx = quad_max(mx) * c;
        const float m_new = fmaxf(row_max[hr], mx);  // finite: key 0 is in tile 0 for every row
        const float alpha = exp2f(row_max[hr] - m_new);
        row_max[hr] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < NTILES; ++nt) {
          const float p0 = exp2f(acc_s[nt][2 * hr] * c - m_new), p1 = exp2f(acc_s[nt][2 * hr + 1] * c - m_new);
          acc_s[nt][2 * hr] = p0, acc_s[nt][2 * hr + 1] = p1;
          sum += p0 + p1;
        }
        row_sum[hr] = row_sum[hr] * alpha + quad_sum(sum);
#pragma unroll
        for (int dt = 0; dt < DTILES; ++dt) acc_o[dt][2 * hr] *= alpha, acc_o[dt][2 * hr + 1] *= alpha;
      }
      // C fragments of n8 tiles 2kk, 2kk+1 = A fragment of k16 step kk.
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        pf[kk][0] = pack_bf16x2(acc_s[2 * kk][0], acc_s[2 * kk][1]);
        pf[kk][1] = pack_bf16x2(acc_s[2 * kk][2], acc_s[2 * kk][3]);
        pf[kk][2] = pack_bf16x2(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
        pf[kk][3] = pack_bf16x2(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
      }
    }

    cp_async_wait<1>();  // V_j landed; K_{j+1} may still be in flight
    __syncthreads();
    // Prefetch V_{j+1} into the other buffer (last read in iteration j-1, before the barrier above).
    if (j + 1 < n_tiles) load_rows<BN>(sV + (buf ^ 1) * BN * HEAD_DIM, vh + (size_t)(k0 + BN) * HEAD_DIM);
    cp_async_commit();

    // O += P V_j: V [key][d] row-major is k x n with n contiguous, read transposed.
    if (active) {
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
        for (int dp = 0; dp < DTILES / 2; ++dp) {  // (keys 0-7,d 0-7) (keys 8-15,d 0-7) (keys 0-7,d 8-15) (keys 8-15,d 8-15)
          const int r = kk * 16 + lane % 16, ch = dp * 2 + lane / 16;
          unsigned vf[4];
          ldmatrix_x4_trans(vf, vt + r * HEAD_DIM + swz(r, ch) * 8);
          mma_bf16_16816(acc_o[2 * dp], pf[kk], vf[0], vf[1]);
          mma_bf16_16816(acc_o[2 * dp + 1], pf[kk], vf[2], vf[3]);
        }
    }
  }
  cp_async_wait<0>();  // only empty groups can remain; nothing may be in flight at exit

  // O / l, rounded to bf16: fragment row g (and g+8), columns 8*dt + 2t, +1.
  const float inv0 = 1.0f / row_sum[0], inv1 = 1.0f / row_sum[1];
  const int r0 = warp * 16 + g;
#pragma unroll
  for (int dt = 0; dt < DTILES; ++dt) {
    const int col = dt * 8 + 2 * t;
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)r0 * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][0] * inv0, acc_o[dt][1] * inv0);
    *reinterpret_cast<__nv_bfloat162*>(oh + (size_t)(r0 + 8) * HEAD_DIM + col) =
        __floats2bfloat162_rn(acc_o[dt][2] * inv1, acc_o[dt][3] * inv1);
  }
}
