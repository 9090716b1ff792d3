/* forgek
{
  "name": "lookback_chain_fk",
  "workspaces": [{"name": "status0", "bytes": "8 + 8*T", "zero": true},
                 {"name": "status1", "bytes": "8 + 8*T", "zero": true}],
  "launches": [
    {"kernel": "chain_polling", "grid": ["T"], "block": [256], "args": ["x", "y0", "status0", "T"]},
    {"kernel": "chain_backing_off", "grid": ["T"], "block": [256], "args": ["x", "y1", "status1", "T"]}
  ]
}
*/
// One CTA per tile of 256 values; its tile id comes from a counter in word 0 of the workspace (the
// order CTAs start in, which the look-back needs), the rest of the workspace is the status words.
// Warp 0 chains the tile through fk::lookback_chain, then the last thread of the block writes
// y[tile] = exclusive + aggregate (so a result left in lane 0 only would fail). 65536 tiles keep
// ~16 waves of CTAs waiting on each other: windows that span many tiles and stay incomplete.
#include <forgek/lookback.cuh>
#include <forgek/reduce.cuh>

template <int backoff_ns>
__device__ void chain(const float* x, float* y, unsigned long long* workspace, int T)
{
  __shared__ int tile_slot;
  __shared__ float result;
  if (threadIdx.x == 0) tile_slot = static_cast<int>(atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u));
  __syncthreads();
  const int tile = tile_slot;
  const float aggregate = fk::block_sum_tree<256>(x[static_cast<size_t>(tile) * 256 + threadIdx.x]);
  unsigned long long* status = workspace + 1;  // [T]
  if (threadIdx.x < 32) {
    const float exclusive = fk::lookback_chain<backoff_ns>(status, tile, aggregate, threadIdx.x);
    if (threadIdx.x == 31) result = exclusive + aggregate;
  }
  __syncthreads();
  if (threadIdx.x == 255) y[tile] = result;
}

extern "C" __global__ void __launch_bounds__(256) chain_polling(const float* x, float* y, unsigned long long* status, int T)
{
  chain<0>(x, y, status, T);
}

extern "C" __global__ void __launch_bounds__(256) chain_backing_off(const float* x, float* y, unsigned long long* status, int T)
{
  chain<64>(x, y, status, T);
}
