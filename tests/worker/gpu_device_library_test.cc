// The device library (device_library/forgek/*.cuh) on a real GPU: each primitive runs in a small
// test operator under tests/worker/device_library/<name>/, whose kernel.cu uses the primitive and
// whose golden.cu computes the same result without the library; the worker evaluates the kernel
// against the golden on every config and two fresh seeds, as it does any candidate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::CompileSeed;
using testing::LoadOp;

using testing::NoCache;

std::string TestOperatorDir(const std::string& name) {
  std::string dir = SourceDir() + "/tests/worker/device_library/" + name;
  if (access((dir + "/operator.json").c_str(), R_OK) != 0) dir = "tests/worker/device_library/" + name;
  return dir;
}

// The test operator `name`'s kernel.cu (built on the library) agrees with its golden.cu.
void ExpectKernelMatchesGolden(const std::string& name) {
  OperatorSpec op = LoadOp(TestOperatorDir(name));
  ASSERT_EQ(op.name, name);
  Compiler compiler(NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  req.candidate = CompileSeed(compiler, op, name);
  ASSERT_FALSE(req.golden.cubin.empty());
  ASSERT_FALSE(req.candidate.cubin.empty());
  req.time = false;
  req.seeds = 2;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << name << ": " << OutcomeName(r.outcome) << ": " << r.detail;
  for (const ConfigResult& c : r.configs)
    std::printf("[ devlib   ] %-14s %s rel_l2 %.3g max_abs %.3g\n", name.c_str(), c.config.c_str(),
                c.correctness.rel_l2, c.correctness.max_abs);
}

// reduce.cuh and softmax.cuh in a warp: warp_sum / max / min, a width-8 sum, warp_argmax over rows
// full of ties (whole warp and 8-lane groups), warp_softmax_merge, and softmax_absorb of 4 values
// merged with empty states; each result read from a lane other than 0.
TEST(GpuDeviceLibrary, WarpReductionsArgmaxWithTiesAndSoftmaxMerge) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("reduce_warp");
}

// reduce.cuh in a block: block_sum / block_max with caller and internal scratch on 96 threads (a
// multiple of 32, no power of two; the internal form called twice in a row), and the shared-memory
// tree forms (sum, max, argmax with ties) on 128 threads; results read from the last thread.
TEST(GpuDeviceLibrary, BlockReductionsBroadcastToEveryThread) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("reduce_block");
}

// radix_select.cuh: the first K of rows of small integers (every value tied hundreds of times)
// from entries held in reverse column order, ties by the lower column, at K = 64, 37 of 100 (more
// threads than entries) and 1; the selected minimum key and the bound over per-thread maxima.
TEST(GpuDeviceLibrary, RadixSelectTakesTheFirstKWithTiesByColumn) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("radix_select");
}

// lookback.cuh: 65536 tiles chained by the decoupled look-back, polling back to back and with a
// back-off; tile ids from a counter, every tile's inclusive prefix checked against an fp64 scan.
TEST(GpuDeviceLibrary, DecoupledLookBackChainsEveryTile) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("lookback_chain");
}

// scan.cuh: a warp's segment of 4 rows of 32 float4 scanned in place, each lane's offsets and the
// segment total, against an fp64 scan of every segment.
TEST(GpuDeviceLibrary, WarpScanOfFloat4Rows) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("warp_scan_rows");
}

// vec.cuh: 16-byte loads (nc no-allocate, with the L2 prefetch, streaming) and stores (streaming,
// plain), bf16x8 and bf16x2 packing, on a size with no tail.
TEST(GpuDeviceLibrary, VectorLoadsStoresAndBf16Packing) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("vec_copy");
}

// vec.cuh's hinted accesses: fk::load with every LoadHint and fk::store with every StoreHint on
// accesses of 16, 8, 4 and 2 bytes (fk::Access, fk::Floats; nc_na on a float2 through its bits,
// nc_na_l2_256 on a uint4), FloatPack loads and stores, map_bf16x8 with a lambda, absmax_bf16x8;
// fp8.cuh's quantize_e4m3x8 with saturation.
TEST(GpuDeviceLibrary, HintedLoadsStoresAndE4m3Packing) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("vec_hints");
}

// activation.cuh: both GELU forms (tanh.approx and the sigmoid identity) against tanhf on values out
// to |x| ~ 16, where the sigmoid form's exp overflows.
TEST(GpuDeviceLibrary, GeluFormsMatchTanh) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("activation_gelu");
}

// cp_async.cuh: cg 16 B, ca 16 / 8 / 4 B, zero fill through src_bytes (partial and 0), two commit
// groups, wait_group<1> and wait_all.
TEST(GpuDeviceLibrary, CpAsyncCopiesWithZeroFill) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("cp_async_copy");
}

// mbarrier.cuh + tma.cuh loads: a tile through shared memory by 2-D, 3-D and cache-hinted TMA
// loads from tensor maps in the manifest, over two phases of one mbarrier (arrive_expect_tx + wait,
// then expect_tx + arrive + a try_wait loop), with prefetch_tensormap.
TEST(GpuDeviceLibrary, MbarrierAndTmaTileLoads) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("tma_load");
}

// tma.cuh stores: shared tiles written by the threads, fence_proxy_async_smem, then 2-D and 3-D
// TMA stores in two bulk groups (bulk_wait_read<1>, bulk_wait<0>).
TEST(GpuDeviceLibrary, TmaStores) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("tma_store");
}

// tma.cuh multicast in a cluster of 2: each CTA writes out the tile its peer multicast into it
// (plain and cache-hinted multicast).
TEST(GpuDeviceLibrary, TmaMulticastReachesThePeerCta) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("tma_multicast");
}

// wgmma.cuh: a 64x128x64 bf16 tile (four m64n128k16 steps, the first with scale-d = 0) from
// 128B-swizzled TMA tiles through the K-major / N-major descriptors of the shipped gemm families,
// against a plain matmul; the accumulator layout through wgmma_acc_row / wgmma_acc_col.
TEST(GpuDeviceLibrary, WgmmaTileMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("wgmma_tile");
}

// mma_gemm_tile.cuh: a GEMM in 64 x 64 block tiles (2 x 2 warps, a 3-deep cp.async ring, a
// grouped raster) against a plain matmul, with M not a multiple of the tile and K of one k-step.
TEST(GpuDeviceLibrary, MmaGemmTileMatchesAMatmul) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("mma_gemm_tile");
}

// cluster.cuh in clusters of 4: ranks, relaxed and release/acquire cluster barriers, DSMEM loads
// (scalar and 16-byte), DSMEM stores into a peer, and remote mbarrier arrivals (both semantics).
TEST(GpuDeviceLibrary, ClusterDsmemExchangeAndRemoteArrivals) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("cluster_dsmem");
}

// wgmma.cuh setmaxnreg: warpgroup 0 deallocates to 40 registers, warpgroups 1-2 allocate 232, and
// the kernel still computes its result.
TEST(GpuDeviceLibrary, SetmaxnregKernelStaysCorrect) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectKernelMatchesGolden("setmaxnreg");
}

}  // namespace
}  // namespace forgek
