/* forgek
{
  "name": "gelu_tanh_bulk_copy_pipeline",
  "mechanisms": ["tma", "mbarrier_pipeline", "persistent_grid", "vector_16B", "streaming_store"],
  "controls": {"mbarrier_pipeline": ["STAGES"], "tile": ["VPT"], "block_size": ["THREADS"],
               "persistent_grid": ["CTAS_PER_SM"]},
  "params": {"STAGES": [4, 2, 8], "VPT": [4, 2, 8], "THREADS": [256, 128, 512], "CTAS_PER_SM": [2, 1, 4], "TANH": 1},
  "let": {"tile_vecs": "THREADS*VPT", "smem_bytes": "STAGES*tile_vecs*16"},
  "constraints": ["N % 8 == 0", "CTAS_PER_SM*THREADS <= 2048", "CTAS_PER_SM*(smem_bytes + 1024) <= 233472",
                  "N/8 + (num_sms*CTAS_PER_SM*(STAGES + 1))*tile_vecs < 2147483647"],
  "launches": [
    {"kernel": "gelu_tanh_bulk_copy_pipeline",
     "grid": ["min(num_sms*CTAS_PER_SM, ceil_div(N/8, tile_vecs))"], "block": ["THREADS"], "smem": "smem_bytes",
     "args": ["x", "y", "N"]}
  ]
}
*/
// tanh-GELU over a flat bf16 vector, x streamed into shared memory by the bulk-copy (TMA) engine
// through a STAGES-deep mbarrier ring; persistent CTAs compute from shared memory and store y.
//
//   x, y      [N] bf16, viewed as [N/8] 16-byte vectors, cut into tiles of THREADS*VPT vectors
//   stage_buf [STAGES][THREADS*VPT] uint4 (dynamic shared memory): one tile of x per stage
//   full      [STAGES] mbarriers: stage s holds its tile once the copy's bytes have landed
//   grid      -> CTAS_PER_SM CTAs per SM (num_sms SMs); CTA b takes tiles b, b+grid, ... (iteration it
//                uses stage it % STAGES, waiting on phase parity (it / STAGES) & 1)
//   thread t  -> vectors t, t+THREADS, ... of the tile in shared memory (conflict-free 16-byte
//                reads) and of y (coalesced streaming stores)
// One thread issues each tile as a single bulk copy, so STAGES tiles (STAGES*THREADS*VPT*16 bytes,
// up to ~200 KB per SM) are in flight without holding a register: far more bytes in flight than
// register-staged loads, which is what keeps HBM saturated. A stage is refilled as soon as every
// thread has copied its vectors to registers (one __syncthreads), before the math and stores.
// TANH: 1 = 0.5x + 0.5x*tanh.approx(u) (one MUFU op), 0 = x / (1 + exp(-2u)).
#include <cuda_bf16.h>
#include <forgek/activation.cuh>
#include <forgek/mbarrier.cuh>
#include <forgek/tma.cuh>
#include <forgek/vec.cuh>

constexpr int kTileVecs = THREADS * VPT;

// y = 0.5 * x * (1 + tanh(k * (x + 0.044715 x^3))), k = sqrt(2/pi), in fp32, in the TANH form.
__device__ __forceinline__ float gelu_tanh(float x) {
  return TANH ? fk::gelu_tanh_approx(x) : fk::gelu_tanh_sigmoid(x);
}

__device__ __forceinline__ uint4 gelu_vector(uint4 in) { return fk::map_bf16x8(in, gelu_tanh); }

// One thread: copy tile `tile` of x (the last one may be partial) into `stage`, completing on `bar`.
__device__ __forceinline__ void issue_tile(uint4* stage, unsigned long long* bar, const uint4* x4, int tile,
                                           int nvec) {
  const int vecs = min(kTileVecs, nvec - tile * kTileVecs);
  const unsigned bytes = static_cast<unsigned>(vecs) * 16u;
  fk::mbar_arrive_expect_tx(bar, bytes);
  fk::bulk_load(stage, x4 + static_cast<size_t>(tile) * kTileVecs, bytes, bar);
}

extern "C" __global__ void __launch_bounds__(THREADS)
gelu_tanh_bulk_copy_pipeline(const __nv_bfloat16* __restrict__ x,  // [N]
                             __nv_bfloat16* __restrict__ y,        // [N]
                             int N) {
  extern __shared__ __align__(128) uint4 stage_buf[];  // [STAGES][kTileVecs]
  __shared__ __align__(8) unsigned long long full[STAGES];

  const int nvec = N / 8;  // N % 8 == 0 (a manifest constraint)
  const int tiles = (nvec + kTileVecs - 1) / kTileVecs;
  const uint4* x4 = reinterpret_cast<const uint4*>(x);
  uint4* y4 = reinterpret_cast<uint4*>(y);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) fk::mbar_init(&full[s], 1);
    fk::fence_barrier_init();
  }
  __syncthreads();
  // Prologue: fill the ring with this CTA's first STAGES tiles.
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      const int t = blockIdx.x + s * gridDim.x;
      if (t < tiles) issue_tile(stage_buf + s * kTileVecs, &full[s], x4, t, nvec);
    }
  }

  // Every tile issued is waited on below, so no copy is in flight into this CTA's shared memory at exit.
  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++it) {
    const int s = it % STAGES;
    uint4* stage = stage_buf + s * kTileVecs;
    fk::mbar_wait(&full[s], (it / STAGES) & 1);

    const int base = tile * kTileVecs;
    uint4 v[VPT];  // [VPT] vectors of this thread
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      const int local = threadIdx.x + j * THREADS;
      if (base + local < nvec) v[j] = stage[local];
    }
    __syncthreads();  // every thread holds its vectors: stage s may be refilled
    if (threadIdx.x == 0) {
      const int refill = tile + STAGES * gridDim.x;
      if (refill < tiles) issue_tile(stage, &full[s], x4, refill, nvec);
    }
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      const int local = threadIdx.x + j * THREADS;
      if (base + local < nvec) fk::st_global_cs(y4 + base + local, gelu_vector(v[j]));
    }
  }
}
