/* forgek
{
  "name": "cumsum_cluster_rows",
  "mechanisms": ["thread_block_cluster", "cluster_dsmem", "vector_16B", "block_scan", "warp_shuffle_reduction",
                 "memory_level_parallelism", "streaming_store"],
  "controls": {"thread_block_cluster": ["CLUSTER"], "block_size": ["THREADS"], "memory_level_parallelism": ["VECS"]},
  "params": {"CLUSTER": [1, 2, 4, 8], "THREADS": [256, 512, 128], "VECS": [4, 8, 2, 16]},
  "constraints": ["N % 4 == 0", "THREADS*VECS <= 8192"],
  "launches": [
    {"kernel": "cumsum_cluster_rows", "grid": ["CLUSTER*M"], "block": ["THREADS"], "cluster": ["CLUSTER"],
     "args": ["x", "y", "N"]}
  ]
}
*/
// Inclusive prefix sum of each row of x[M, N] (fp32) by one thread-block cluster per row, the row
// held in registers: no look-back, no status workspace (so no memset before the launch) and one
// launch. For the rows users run (a vocabulary of 128256 at decode batch, an activation row of
// 4096) a whole row fits in the registers of a cluster: x is read once, y written once, and the
// CTAs of a row exchange one number each through distributed shared memory. Longer rows are
// scanned in passes of the cluster's capacity with a running carry (correct for any N, but a
// single long vector then runs on CLUSTER SMs only: the look-back families serve that shape).
//
//   x, y     [M, N] fp32, each row viewed as [N/4] float4 vectors (N % 4 == 0: every row starts
//            16-byte aligned)
//   row m    -> the cluster of CTAs CLUSTER*m .. CLUSTER*m + CLUSTER-1 (grid = CLUSTER*M)
//   pass p   -> vectors [p*P, (p+1)*P) of the row, P = CLUSTER*THREADS*VECS; the CTA of rank c
//               takes the contiguous chunk [p*P + c*T, p*P + (c+1)*T), T = THREADS*VECS
//   warp w   -> the contiguous segment of 32*VECS vectors [w*32*VECS, (w+1)*32*VECS) of the chunk
//   lane l   -> vectors l, l+32, ..., l+32*(VECS-1) of its warp's segment: VECS 16-byte loads all
//               issued before any is used, each one coalesced 512-byte row per warp, as are the
//               streaming stores of y
//
// Per pass: the warp scans its segment (in-float4 prefix, a shuffle scan over the lanes per row
// of 32 vectors, a running carry over the rows); the warp totals meet in shared memory (one CTA
// barrier), giving each warp its offset in the chunk and the chunk's sum; thread 0 publishes the
// chunk sum, one cluster barrier (release/acquire), and lane r of every warp reads rank r's sum
// through DSMEM: the ranks below this CTA's give its offset in the pass, all of them the pass total
// that the next pass carries. fp32 throughout, chunks chained by their sums as in the look-back
// families (see operator.json's tolerance).
// warp_total and chunk_sum are double-buffered by pass parity: a warp (or a peer CTA) that has
// passed pass p+1's barrier may overwrite pass p's slot only after every reader of pass p has
// arrived at that barrier, so one barrier per pass suffices.
// CLUSTER = 1 is the same kernel without the exchange (one CTA per row: the control). Pick the
// cluster to the row: ranks past a short row's end still hold SMs through every barrier (on an
// H100, 4096 rows of 4096 took 50 us at CLUSTER = 1 and 939 us at CLUSTER = 8 x 512 threads),
// while 16 rows of 128256 need the cluster to reach enough SMs (10.8 us at CLUSTER = 4 x 512 x 16).
#include <forgek/cluster.cuh>
#include <forgek/reduce.cuh>
#include <forgek/vec.cuh>
#include <forgek/scan.cuh>

constexpr int kWarp = 32;
constexpr int kWarps = THREADS / kWarp;
constexpr int kWarpVecs = kWarp * VECS;        // float4 vectors per warp segment
constexpr int kChunkVecs = THREADS * VECS;     // float4 vectors per CTA per pass
constexpr int kPassVecs = CLUSTER * kChunkVecs;  // float4 vectors of a row per pass of the cluster

extern "C" __global__ void __launch_bounds__(THREADS)
cumsum_cluster_rows(const float* __restrict__ x,  // [M, N]
                    float* __restrict__ y,        // [M, N]
                    int N) {
  __shared__ float warp_total[2][kWarps];  // [pass parity][kWarps] sum of each warp segment
#if CLUSTER > 1
  __shared__ float chunk_sum[2];           // [pass parity] this CTA's chunk sum, read by its peers
#endif

  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int rank = CLUSTER > 1 ? static_cast<int>(fk::cluster_ctarank()) : 0;
  const size_t row = blockIdx.x / CLUSTER;  // grid = CLUSTER*M: every row is in range
  const float* __restrict__ x_row = x + row * N;
  float* __restrict__ y_row = y + row * N;
  const int row_vecs = N / 4;

  float row_carry = 0.f;  // sum of the row's earlier passes (the same in every thread of the cluster)
  for (int pass = 0; pass * kPassVecs < row_vecs; ++pass) {
    const int parity = pass & 1;
    const int first = pass * kPassVecs + rank * kChunkVecs + warp * kWarpVecs + lane;  // row 0's vector

    // VECS vectors in flight per lane; past the end of the row they read as zeros (never stored).
    float4 v[VECS];  // [VECS] this lane's vectors, then their scanned values
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      const int idx = first + k * kWarp;
      v[k] = idx < row_vecs ? fk::ld_global_nc_na_f4(x_row + 4 * static_cast<size_t>(idx))
                            : make_float4(0.f, 0.f, 0.f, 0.f);
    }

    // Scan the warp segment. offset[k]: sum of the segment before this lane's vector of row k;
    // carry: the segment's sum (the same in every lane).
    float offset[VECS];
    const float carry = fk::warp_scan_float4_rows<VECS>(v, offset);
    if (lane == 0) warp_total[parity][warp] = carry;
    __syncthreads();

    float before = 0.f;  // sum of the earlier warps' segments of this chunk
    float chunk = 0.f;   // the chunk's sum, in warp order (the same in every thread)
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float t = warp_total[parity][w];
      if (w < warp) before += t;
      chunk += t;
    }

    float earlier = 0.f;     // sum of the chunks of the lower ranks in this pass
    float pass_sum = chunk;  // sum of the whole pass over the cluster
#if CLUSTER > 1
    if (threadIdx.x == 0) chunk_sum[parity] = chunk;
    fk::cluster_sync();  // every CTA's chunk sum of this pass is visible cluster-wide
    const float peer = lane < CLUSTER ? fk::ld_shared_cluster_f32(fk::map_shared_rank(&chunk_sum[parity], lane)) : 0.f;
    earlier = fk::warp_sum(lane < rank ? peer : 0.f);
    pass_sum = fk::warp_sum(peer);
#endif

    // y = (earlier passes + lower ranks + earlier warps) + (earlier rows and lanes) + in-vector prefix.
    const float base = row_carry + earlier + before;
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      const int idx = first + k * kWarp;
      const float add = base + offset[k];
      const float4 out = make_float4(v[k].x + add, v[k].y + add, v[k].z + add, v[k].w + add);
      if (idx < row_vecs) fk::st_global_cs_f4(y_row + 4 * static_cast<size_t>(idx), out);
    }
    row_carry += pass_sum;
  }
#if CLUSTER > 1
  fk::cluster_sync();  // no CTA exits while a peer may still read its chunk_sum
#endif
}
