/* forgek
{
  "name": "cross_entropy_online_cta_row",
  "mechanisms": ["vector_16B", "online_softmax", "warp_shuffle_reduction", "memory_level_parallelism"],
  "controls": {"block_size": ["THREADS"], "memory_level_parallelism": ["BATCH"], "cache_hint": ["LOAD_HINT"]},
  "params": {"THREADS": [512, 256, 1024], "BATCH": [4, 8, 2], "LOAD_HINT": [0, 1]},
  "constraints": ["V % 4 == 0"],
  "launches": [
    {"kernel": "cross_entropy_online_cta_row", "grid": ["T"], "block": ["THREADS"],
     "args": ["logits", "targets", "loss", "T", "V"]}
  ]
}
*/
// Fused cross-entropy, the reference's design with its knobs as params: one CTA of THREADS threads
// per token, the row read ONCE (4 bytes per logit, the floor).
// Each thread walks the row in batches of BATCH float4 (BATCH*16 bytes in flight per thread, issued
// before any is used), keeping an online-softmax state (max m, sum s of exp(x - m)): a batch first
// finds its own max, rescales s once if the max grew, then adds its exps (one extra exp per batch).
// The THREADS states merge by a warp butterfly and then across warps through shared memory; thread 0
// adds the target term:  loss = m + log(s) - x[target]  (one 4-byte load, an L2 hit after the pass).
// LOAD_HINT picks the load of the read-once stream: 0 ld.global.cs (evict-first, the reference's),
// 1 ld.global.nc.L1::no_allocate. (The .L2::256B prefetch form measured 0.94x on the H200: left out.)
#include <forgek/softmax.cuh>
#include <forgek/vec.cuh>

// Online-softmax state of a set of logits: their max and the sum of exp(x - max).
using LseState = fk::SoftmaxState;

// The 16-byte loads of the logits with the LOAD_HINT cache policy.
constexpr fk::LoadHint kLoad = LOAD_HINT == 0 ? fk::LoadHint::cs : fk::LoadHint::nc_na;

// Adds n float4 (already loaded) to a thread's state.
template <int n>
__device__ __forceinline__ void absorb(LseState& st, const float4 (&v)[n]) {
  float m = st.max;
#pragma unroll
  for (int k = 0; k < n; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  float s = st.sum * __expf(st.max - m);  // st.max = -inf on the first batch: 0 * 0
#pragma unroll
  for (int k = 0; k < n; ++k) s += __expf(v[k].x - m) + __expf(v[k].y - m) + __expf(v[k].z - m) + __expf(v[k].w - m);
  st = {m, s};
}

extern "C" __global__ void __launch_bounds__(THREADS)
cross_entropy_online_cta_row(const float* __restrict__ logits,  // [T, V] row-major
                             const int* __restrict__ targets,   // [T], each in [0, V)
                             float* __restrict__ loss,          // [T]
                             int T, int V) {
  __shared__ LseState warp_state[THREADS / 32];  // [THREADS/32] one state per warp
  const int t = blockIdx.x;
  if (t >= T) return;
  const float* row = logits + static_cast<size_t>(t) * V;
  const float4* row4 = reinterpret_cast<const float4*>(row);  // V % 4 == 0: rows stay 16-byte aligned
  const int vectors = V / 4;

  LseState st{fk::neg_inf(), 0.f};
  // Full batches: BATCH float4 per thread, strided by THREADS so each warp load is 512 contiguous bytes.
  const int full = vectors / (THREADS * BATCH) * (THREADS * BATCH);
  for (int base = threadIdx.x; base < full; base += THREADS * BATCH) {
    float4 v[BATCH];  // [BATCH] float4, all loads issued before the first use
#pragma unroll
    for (int k = 0; k < BATCH; ++k) v[k] = fk::load<kLoad>(row4 + base + k * THREADS);
    absorb(st, v);
  }
  // Tail: fewer than THREADS*BATCH vectors, one float4 at a time.
  for (int q = full + threadIdx.x; q < vectors; q += THREADS) {
    const float4 v[1] = {fk::load<kLoad>(row4 + q)};
    absorb(st, v);
  }

  st = fk::warp_softmax_merge(st);
  if (threadIdx.x % 32 == 0) warp_state[threadIdx.x / 32] = st;
  __syncthreads();
  if (threadIdx.x < 32) {
    st = threadIdx.x < THREADS / 32 ? warp_state[threadIdx.x] : LseState{fk::neg_inf(), 0.f};
    st = fk::warp_softmax_merge(st);
    if (threadIdx.x == 0) loss[t] = st.max + logf(st.sum) - row[targets[t]];
  }
}
