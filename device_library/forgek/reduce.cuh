// forgek/reduce.cuh: warp and block reductions of floats (namespace fk). Width: lanes per group,
// a power of two <= 32; a butterfly over offsets Width/2 .. 1, so every lane gets the result.
//   float fk::warp_sum<Width = 32>(float v)   — sum over each Width-lane group; the whole warp calls it
//   float fk::warp_sum(float v, int width)    — the same with a run-time width (a power of two <= 32)
//   float fk::warp_max<Width = 32>(float v)   — max (fmaxf) over each Width-lane group
//   float fk::warp_min<Width = 32>(float v)   — min (fminf) over each Width-lane group
//   void fk::warp_argmax<Width = 32>(float& v, int& i) — (v, i) of the group's largest v, ties to the lowest i
//   bool fk::argmax_before(float v, int i, float w, int j) — v > w || (v == w && i < j): the argmax order
//   float fk::block_sum(float v, float* scratch) — sum over the block, returned to every thread; all threads
//        call it; blockDim.x a multiple of 32; scratch: blockDim.x/32 floats of shared memory that the
//        caller does not touch again until after a later __syncthreads (one array per call: no trailing barrier)
//   float fk::block_max(float v, float* scratch) — the same for the max
//   float fk::block_sum(float v) / block_max(float v) — the same with internal shared scratch (ends with a
//        __syncthreads, so it may be called repeatedly)
//   float fk::block_sum_tree<Threads>(float v) / block_max_tree<Threads>(float v) — the same through a
//        shared-memory halving tree (Threads = blockDim.x, a power of two; log2(Threads) barriers); ends with a barrier
//   void fk::block_argmax_tree<Threads>(float& v, int& i) — (v, i) of the block's largest v, ties to the lowest i
// Block results are the same bit for bit in every thread (each reads the warp partials in warp order).
#pragma once
#include <forgek/common.cuh>

namespace fk {

// Sum of v over each group of Width consecutive lanes, in every lane; all 32 lanes call it.
template <int Width = 32>
FK_DEVICE float warp_sum(float v)
{
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum of v over each group of `width` consecutive lanes (run-time power of two <= 32), in every lane.
FK_DEVICE float warp_sum(float v, int width)
{
  for (int offset = width / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Max (fmaxf) of v over each group of Width consecutive lanes, in every lane; all 32 lanes call it.
template <int Width = 32>
FK_DEVICE float warp_max(float v)
{
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Min (fminf) of v over each group of Width consecutive lanes, in every lane; all 32 lanes call it.
template <int Width = 32>
FK_DEVICE float warp_min(float v)
{
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// The argmax order: (v, i) comes before (w, j) if v is larger, or equal with a lower index.
FK_DEVICE bool argmax_before(float v, int i, float w, int j) { return v > w || (v == w && i < j); }

// (v, i) <- the pair of the group of Width lanes that comes first in the argmax order (largest v,
// ties to the lowest i), in every lane; all 32 lanes call it. Start empty lanes at (-inf, INT_MAX).
template <int Width = 32>
FK_DEVICE void warp_argmax(float& v, int& i)
{
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, offset);
    const int oi = __shfl_xor_sync(0xffffffffu, i, offset);
    if (argmax_before(ov, oi, v, i)) v = ov, i = oi;
  }
}

// Sum of v over the block, in every thread. All threads call it; blockDim.x is a multiple of 32;
// `scratch` holds blockDim.x/32 floats of shared memory, not reused before a later __syncthreads.
FK_DEVICE float block_sum(float v, float* scratch)
{
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) total += scratch[w];
  return total;
}

// Max of v over the block, in every thread; the same contract as block_sum(v, scratch).
FK_DEVICE float block_max(float v, float* scratch)
{
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float m = scratch[0];
  for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

// Sum of v over the block, in every thread, through internal shared scratch; ends with a barrier.
FK_DEVICE float block_sum(float v)
{
  __shared__ float scratch[32];
  const float total = block_sum(v, scratch);
  __syncthreads();
  return total;
}

// Max of v over the block, in every thread, through internal shared scratch; ends with a barrier.
FK_DEVICE float block_max(float v)
{
  __shared__ float scratch[32];
  const float m = block_max(v, scratch);
  __syncthreads();
  return m;
}

// Sum (IsMax = false) or max of v over a block of Threads threads (a power of two) through a
// shared-memory halving tree; the result in every thread. Ends with a barrier, so it may be called again.
template <int Threads, bool IsMax>
FK_DEVICE float block_reduce_tree(float v)
{
  __shared__ float partial[Threads];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int width = Threads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const float other = partial[threadIdx.x + width];
      partial[threadIdx.x] = IsMax ? fmaxf(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();
  return result;
}
// Sum of v over a block of Threads threads (a power of two) by a shared-memory tree, in every thread.
template <int Threads>
FK_DEVICE float block_sum_tree(float v) { return block_reduce_tree<Threads, false>(v); }
// Max of v over a block of Threads threads (a power of two) by a shared-memory tree, in every thread.
template <int Threads>
FK_DEVICE float block_max_tree(float v) { return block_reduce_tree<Threads, true>(v); }

// (v, i) <- the block's first pair in the argmax order (largest v, ties to the lowest i), in every
// thread, by a shared-memory tree over Threads threads (a power of two). Ends with a barrier.
template <int Threads>
FK_DEVICE void block_argmax_tree(float& v, int& i)
{
  __shared__ float value[Threads];
  __shared__ int index[Threads];
  value[threadIdx.x] = v;
  index[threadIdx.x] = i;
  __syncthreads();
  for (int width = Threads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const float ov = value[threadIdx.x + width];
      const int oi = index[threadIdx.x + width];
      if (argmax_before(ov, oi, value[threadIdx.x], index[threadIdx.x])) value[threadIdx.x] = ov, index[threadIdx.x] = oi;
    }
    __syncthreads();
  }
  v = value[0];
  i = index[0];
  __syncthreads();
}

}  // namespace fk
