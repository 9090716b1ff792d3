// The TMA-taps convolution family against the golden on images its pixel blocks do not tile: blocks
// that overhang the image (H % BH, W % BW), images narrower or shorter than one block, a batch whose
// blocks do not fill the last M tile (a padding block past the batch), 1x1 and 5x5 filters, and a
// channel count of three k-tiles. Every pixel of y must come out once, with the padding read as zero.
#include <gtest/gtest.h>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::LoadOp;
using testing::OperatorsRoot;

TEST(GpuConv2d, TmaTapsFamilyIsCorrectOnImagesItsBlocksDoNotTile) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Compiler compiler{testing::NoCache()};
  WorkerEvaluatorOptions options;
  options.command = testing::WorkerCommand();
  WorkerEvaluator ev{options};

  OperatorSpec op = LoadOp(OperatorsRoot() + "/conv2d_fprop_bf16");
  ASSERT_EQ(op.name, "conv2d_fprop_bf16");
  auto shape = [](int n, int h, int w, int c, int k, int r) {
    return ConfigSpec{"N" + std::to_string(n) + "_" + std::to_string(h) + "x" + std::to_string(w) + "_C" +
                          std::to_string(c) + "_K" + std::to_string(k) + "_" + std::to_string(r) + "x" +
                          std::to_string(r),
                      {{"N", n}, {"H", h}, {"W", w}, {"C", c}, {"K", k}, {"R", r}, {"S", r}}};
  };
  op.configs.push_back(shape(3, 13, 13, 64, 256, 3));
  op.configs.push_back(shape(2, 7, 20, 128, 256, 5));
  op.configs.push_back(shape(1, 5, 9, 64, 512, 1));
  op.configs.push_back(shape(5, 17, 3, 192, 256, 3));
  const KernelUnderTest golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  // 8x8, 4x16, 2x32 and 1x64 blocks; cooperative and ping-pong; 2-CTA clusters; 64-, 128- and
  // 256-pixel tiles; direct stores and TMA stores of one and two panels.
  for (const char* params_json :
       {R"({"BM":128,"BN":256,"STAGES":4,"BW":8,"CLUSTER_M":1,"GROUP_M":1,"SCHEDULE":0,"EPI":2})",
        R"({"BM":128,"BN":128,"STAGES":5,"BW":16,"CLUSTER_M":2,"GROUP_M":8,"SCHEDULE":0,"EPI":1})",
        R"({"BM":128,"BN":128,"STAGES":6,"BW":32,"CLUSTER_M":1,"GROUP_M":8,"SCHEDULE":1,"EPI":1})",
        R"({"BM":64,"BN":256,"STAGES":4,"BW":64,"CLUSTER_M":2,"GROUP_M":1,"SCHEDULE":0,"EPI":2})",
        R"({"BM":256,"BN":128,"STAGES":3,"BW":8,"CLUSTER_M":1,"GROUP_M":1,"SCHEDULE":0,"EPI":0})"})
    testing::ExpectInstanceCorrect(compiler, ev, op, golden, op.dir + "/families/wgmma_ws_tma_taps.cu", params_json, 2,
                                   "conv2d");
}

}  // namespace
}  // namespace forgek
