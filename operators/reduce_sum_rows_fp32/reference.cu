/* forgek
{
  "name": "reduce_sum_rows_lane_groups_or_cta_row",
  "mechanisms": ["vector_16B", "warp_shuffle_reduction", "memory_level_parallelism"],
  "params": {"WARPS": 8, "LANE_ITEMS": 4, "CTA_ITEMS": 8},
  "let": {
    "vecs": "N/4",
    "group_path": "N <= 32*4*LANE_ITEMS",
    "group_lanes": "min(32, pow2(log2(2*ceil_div(vecs, LANE_ITEMS) - 1)))",
    "rows_per_cta": "32*WARPS/group_lanes",
    "cta_threads": "min(1024, 32*ceil_div(ceil_div(vecs, CTA_ITEMS), 32))",
    "threads": "group_path*32*WARPS + (1 - group_path)*cta_threads",
    "ctas": "group_path*ceil_div(M, rows_per_cta) + (1 - group_path)*M"
  },
  "constraints": ["N % 4 == 0"],
  "launches": [
    {"kernel": "reduce_sum_rows_reference",
     "grid": ["ctas"], "block": ["threads"],
     "args": ["x", "y", "M", "N", "group_lanes"]}
  ]
}
*/
// Expert row sum of an fp32 [M, N] row-major matrix: y[i] = sum_j x[i, j], fp32 accumulation.
//
// A pure read stream (4 bytes per element in, 4 per row out): the time is DRAM bandwidth, so
// both paths read x exactly once with 16-byte loads written as straight-line code (unconditional
// loads from clamped addresses, masked afterwards), so that the loads of a thread can be in flight
// together. ptxas keeps the kernel at 32 registers (full occupancy, 2048 threads per SM) and
// interleaves the adds, leaving up to ~6 float4 per thread, ~100-190 KiB per SM, in flight.
//   N <= 32*4*LANE_ITEMS  (short rows) a group of G lanes per row, 32/G rows per warp, where
//                         G = the power of two >= N / (4*LANE_ITEMS), at most 32 (N = 128: G = 8,
//                         4 rows per warp, 32 rows per CTA). Lane l of a group holds float4 vectors
//                         l, l+G, ..., l+(LANE_ITEMS-1)G of its row, so each warp-wide load reads
//                         32/G runs of 16G contiguous bytes (N = 128: four whole 128-byte lines).
//                         The group sums by log2(G) xor-shuffles: no shared memory, no barrier.
//                         A CTA per row (CUB's segmented reduce) or even a warp per row would
//                         leave N = 128 with one 16-byte load per lane or less and a reduction
//                         tree per 512 bytes.
//   larger N              one CTA per row, T = 32*ceil(N/(4*CTA_ITEMS*32)) threads (at most
//                         1024), each thread CTA_ITEMS float4 per pass (one pass while
//                         N <= 32768; longer rows loop). Warp shuffles, one partial per warp in
//                         shared memory, warp 0 adds them. N = 8192: 256 threads, 32 KiB of loads
//                         in flight per CTA, 8192 CTAs (62 per SM) so the grid tail is short.
//                         Rows are independent and M is large on every config, so a cluster
//                         per row is never needed; a small-M, huge-N shape would want one.
// The path is chosen by N, uniformly for the grid; the manifest sizes the launch to match and
// passes G (group_lanes) so that kernel and grid agree on rows per CTA.
// Error: per thread a sequential fp32 sum of 4*ITEMS values, then a tree of log2(threads)
// levels: max_abs ~5e-5 at N = 8192 against the fp64 golden (tolerance 2e-3).
// Measured (H200, 2026-11-29, cold L2, median; copy bound from forgek's 4194 GB/s calibration):
// 8192x8192 71.1 us (90.0 %, the same as CUB's 71.3 us); 262144x128 41.4 us (77.9 %; CUB 309.4 us,
// PyTorch 70.4 us). LANE_ITEMS 8 (4 lanes per row) and CTA_ITEMS 4 (512 threads at N = 8192) were
// within noise (0.988x, 1.008x).
#include <forgek/reduce.cuh>

constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;

__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// ---- short rows: G lanes per row --------------------------------------------------------------
__device__ __forceinline__ void sum_rows_lane_groups(const float* __restrict__ x, float* __restrict__ y,
                                                     int M, int N, int G) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  const int sub = lane % G;                      // lane within its row's group
  const int rows_per_warp = kWarp / G;
  const long long row =
      (static_cast<long long>(blockIdx.x) * WARPS + warp) * rows_per_warp + lane / G;
  const bool valid = row < M;                    // invalid lanes still shuffle (full mask)
  const int nvec = N / 4;
  // Loads are unconditional (straight-line code, all issued back to back): a lane past the last
  // row or past the row end reads a clamped in-bounds address and drops the value.
  const float4* xrow =
      reinterpret_cast<const float4*>(x + (valid ? row : M - 1) * static_cast<long long>(N));

  float4 v[LANE_ITEMS];  // [LANE_ITEMS] float4 of this lane's share of the row
#pragma unroll
  for (int i = 0; i < LANE_ITEMS; ++i) v[i] = __ldg(xrow + min(i * G + sub, nvec - 1));
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < LANE_ITEMS; ++i) s += (valid && i * G + sub < nvec) ? sum4(v[i]) : 0.f;
  // Groups are G-aligned runs of lanes (G a power of two): xor offsets < G stay in the group.
  s = fk::warp_sum(s, G);
  if (valid && sub == 0) y[row] = s;
}

// ---- long rows: one CTA per row ---------------------------------------------------------------
__device__ __forceinline__ void sum_row_cta(const float* __restrict__ x, float* __restrict__ y, int N) {
  __shared__ float warp_sum[kMaxThreads / kWarp];  // [threads/32] one partial per warp
  const int row = blockIdx.x;
  const int threads = static_cast<int>(blockDim.x), tid = static_cast<int>(threadIdx.x);
  const int nvec = N / 4;
  const float4* xrow = reinterpret_cast<const float4*>(x + static_cast<long long>(row) * N);

  float s = 0.f;
  for (int base = 0; base < nvec; base += threads * CTA_ITEMS) {
    float4 v[CTA_ITEMS];  // [CTA_ITEMS] float4: all loads of the pass issued before any add
#pragma unroll
    for (int i = 0; i < CTA_ITEMS; ++i) v[i] = __ldg(xrow + min(base + i * threads + tid, nvec - 1));
#pragma unroll
    for (int i = 0; i < CTA_ITEMS; ++i) s += base + i * threads + tid < nvec ? sum4(v[i]) : 0.f;
  }
  s = fk::warp_sum(s);
  const int warp = tid / kWarp, lane = tid % kWarp;
  if (lane == 0) warp_sum[warp] = s;
  __syncthreads();
  if (warp == 0) {
    float t = lane < threads / kWarp ? warp_sum[lane] : 0.f;
    t = fk::warp_sum(t);
    if (lane == 0) y[row] = t;
  }
}

extern "C" __global__ void __launch_bounds__(kMaxThreads)
reduce_sum_rows_reference(const float* __restrict__ x,  // [M, N] row-major
                          float* __restrict__ y,        // [M]
                          int M, int N,
                          int group_lanes) {            // G: lanes per row on the short-row path
  if (N <= kWarp * 4 * LANE_ITEMS)
    sum_rows_lane_groups(x, y, M, N, group_lanes);
  else
    sum_row_cta(x, y, N);
}
