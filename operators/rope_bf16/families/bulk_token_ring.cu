/* forgek
{
  "name": "rope_bulk_token_ring",
  "mechanisms": ["tma", "mbarrier_pipeline", "persistent_grid", "vector_16B", "streaming_store"],
  "controls": {"mbarrier_pipeline": ["STAGES"], "persistent_grid": ["CTAS_PER_SM"], "block_size": ["WARPS"],
               "streaming_store": ["STORE_HINT"]},
  "params": {"STAGES": [3, 4, 2, 6], "CTAS_PER_SM": [2, 1, 4], "WARPS": [4, 8, 2], "STORE_HINT": [1, 0]},
  "let": {"q_bytes": "H*D*2", "slot_bytes": "q_bytes + D*4", "smem_bytes": "STAGES*slot_bytes"},
  "constraints": ["D % 16 == 0", "slot_bytes < 1048576", "CTAS_PER_SM*(smem_bytes + 1024) <= 233472",
                  "CTAS_PER_SM*32*(WARPS + 1) <= 2048"],
  "launches": [
    {"kernel": "rope_bulk_token_ring", "grid": ["min(T, num_sms*CTAS_PER_SM)"], "block": ["32*(WARPS + 1)"],
     "smem": "smem_bytes",
     "args": ["q", "positions", "cos_sin_cache", "q_rot", "T", "H", "D"]}
  ]
}
*/
// NeoX RoPE, out of place, as a persistent token pipeline: the TMA bulk-copy engine streams whole
// tokens into shared memory, the CTA's warps rotate them and store q_rot straight from registers.
//
// CTA b of the grid (G = min(T, num_sms*CTAS_PER_SM) CTAs, all resident) owns tokens b, b+G, b+2G, ...
// Its shared memory is a ring of STAGES token slots:
//   slot s: q_tok [H, D] bf16 (the token's q, H*D*2 contiguous bytes)
//           cs_row [D] fp32 (cache row positions[t]: cos in [0, D/2), sin in [D/2, D))
//   full[s]  (1 arrival + the slot's bytes): the slot holds its token
//   empty[s] (WARPS arrivals): every consumer warp is done reading it
// Producer: one extra warp. Lane 0 refills a slot with two bulk copies (q_tok and cs_row) as soon
// as it is empty, so each SM keeps up to CTAS_PER_SM*STAGES tokens (~8.7 KB each at H=32, D=128)
// of loads in flight with 2 instructions per token instead of 2*H*D/8 per-thread vector loads.
// The positions a producer needs are read 32 tokens at a time, one per lane, a batch ahead, so
// the positions -> cache-row dependency never stalls the ring.
// Consumers: WARPS warps; thread c rotates 8-pair chunks c, c + 32*WARPS, ... of the token (chunk
// = head h, pairs [8j, 8j+8)): two 16-byte shared loads of q, four float4 of cos/sin (broadcast
// among the lanes of one j), two 16-byte global stores (a warp writes whole heads, contiguous).
// q is read once from DRAM by the bulk engine; q_rot is written once.
#include <cuda_bf16.h>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/vec.cuh>

constexpr int kWarp = 32;

// q_rot is written once, never read back: streaming stores (STORE_HINT 1) or plain stores (0).
constexpr fk::StoreHint kStoreOut = STORE_HINT ? fk::StoreHint::cs : fk::StoreHint::plain;
__device__ __forceinline__ void store_out(__nv_bfloat16* p, const uint4& v) {
  fk::store<kStoreOut>(reinterpret_cast<uint4*>(p), v);
}

// 8 consecutive floats from 16-byte-aligned shared memory.
__device__ __forceinline__ void load8_shared(const float* p, float (&f)[8]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0];
  const float4 b = reinterpret_cast<const float4*>(p)[1];
  f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

extern "C" __global__ void __launch_bounds__(kWarp * (WARPS + 1), 1)
rope_bulk_token_ring(const __nv_bfloat16* __restrict__ q,      // [T, H, D]
                     const int* __restrict__ positions,        // [T], in [0, P)
                     const float* __restrict__ cos_sin_cache,  // [P, D]: cos in [0, D/2), sin in [D/2, D)
                     __nv_bfloat16* __restrict__ q_rot,        // [T, H, D]
                     int T, int H, int D) {
  extern __shared__ __align__(128) unsigned char smem[];  // [STAGES] slots of slot_bytes
  __shared__ unsigned long long full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const unsigned q_bytes = static_cast<unsigned>(H) * D * 2;  // multiple of 16 (D % 16 == 0)
  const unsigned cs_bytes = static_cast<unsigned>(D) * 4;
  const unsigned slot_bytes = q_bytes + cs_bytes;             // multiple of 16: slots stay aligned

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      fk::mbar_init(&full[s], 1);
      fk::mbar_init(&empty[s], WARPS);
    }
    fk::fence_barrier_init();
  }
  __syncthreads();

  if (warp == WARPS) {
    // ---- producer warp ----
    const long long stride = gridDim.x;
    // Positions of this CTA's tokens n .. n+31 (lane l: token of index n + l), loaded a batch ahead.
    long long tt = blockIdx.x + lane * stride;
    int pos_next = tt < T ? __ldg(positions + tt) : 0;
    int pos_batch = 0;
    int n = 0;
    for (long long t = blockIdx.x; t < T; t += stride, ++n) {
      const int s = n % STAGES;
      unsigned char* slot = smem + static_cast<size_t>(s) * slot_bytes;
      // Fill n of slot s reuses it after fill n - STAGES was consumed (empty[s] phase n/STAGES - 1).
      if (n >= STAGES) fk::mbar_wait(&empty[s], ((n / STAGES) - 1) & 1);
      // q first: its copy overlaps the wait for the token's position.
      if (lane == 0) {
        fk::mbar_arrive_expect_tx(&full[s], slot_bytes);
        fk::bulk_load(slot, q + static_cast<size_t>(t) * H * D, q_bytes, &full[s]);
      }
      if ((n & 31) == 0) {
        pos_batch = pos_next;
        tt = t + (32 + lane) * stride;
        pos_next = tt < T ? __ldg(positions + tt) : 0;
      }
      const int pos = __shfl_sync(0xffffffffu, pos_batch, n & 31);
      if (lane == 0) {
        fk::bulk_load(slot + q_bytes, cos_sin_cache + static_cast<size_t>(pos) * D, cs_bytes, &full[s]);
      }
      __syncwarp();
    }
    return;  // consumers wait for every copy issued, so the CTA outlives them
  }

  // ---- consumer warps ----
  const int half = D / 2;
  const unsigned chunks = D / 16;                        // 8-pair chunks per head
  const unsigned total = static_cast<unsigned>(H) * chunks;  // chunks per token
  int n = 0;
  for (int t = blockIdx.x; t < T; t += gridDim.x, ++n) {
    const int s = n % STAGES;
    fk::mbar_wait(&full[s], (n / STAGES) & 1);
    const unsigned char* slot = smem + static_cast<size_t>(s) * slot_bytes;
    const __nv_bfloat16* q_tok = reinterpret_cast<const __nv_bfloat16*>(slot);  // [H, D]
    const float* cs_row = reinterpret_cast<const float*>(slot + q_bytes);        // [D]
    __nv_bfloat16* out_tok = q_rot + static_cast<size_t>(t) * H * D;             // [H, D]
    for (unsigned c = threadIdx.x; c < total; c += kWarp * WARPS) {
      const unsigned h = c / chunks, j = c - h * chunks;
      const int lo_off = h * D + 8 * j, hi_off = lo_off + half;
      float x1[8], x2[8], cs[8], sn[8], out1[8], out2[8];
      fk::unpack_bf16x8(fk::ld16(q_tok + lo_off), x1);
      fk::unpack_bf16x8(fk::ld16(q_tok + hi_off), x2);
      load8_shared(cs_row + 8 * j, cs);
      load8_shared(cs_row + half + 8 * j, sn);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        out1[e] = x1[e] * cs[e] - x2[e] * sn[e];
        out2[e] = x2[e] * cs[e] + x1[e] * sn[e];
      }
      store_out(out_tok + lo_off, fk::pack_bf16x8(out1));
      store_out(out_tok + hi_off, fk::pack_bf16x8(out2));
    }
    // Every lane's shared reads of slot s are done (their values were consumed): release it.
    __syncwarp();
    if (lane == 0) fk::mbar_arrive(&empty[s]);
  }
}
