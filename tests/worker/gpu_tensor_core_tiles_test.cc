// Tensor-core family instances against the golden on shapes their tiles do not divide evenly: the fp8
// GEMM's promoted 128x192 tile where N is no multiple of 192 (the last tile's B panels past N are TMA's
// zero fill, its stores clipped), and the persistent FA3 prefill, whose blocks take work tiles from a
// counter, on short sequences, one query head per KV head and a batch of one work tile; work tiles in both
// orders (KV_MAJOR), on a persistent grid and a block per tile. Params left out are at their first value.
#include <gtest/gtest.h>

#include <string>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::LoadOp;
using testing::OperatorsRoot;

struct Fixture {
  Compiler compiler{testing::NoCache()};
  WorkerEvaluator ev{[] {
    WorkerEvaluatorOptions options;
    options.command = testing::WorkerCommand();
    return options;
  }()};
};

TEST(GpuTensorCoreTiles, PromotedFp8WideTileIsCorrectWhereNIsNoMultipleOfIt) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Fixture f;
  OperatorSpec op = LoadOp(OperatorsRoot() + "/gemm_fp8_e4m3");
  ASSERT_EQ(op.name, "gemm_fp8_e4m3");
  op.configs.clear();
  // N = 448 = 2 x 192 + 64 (one B panel of three in the last tile column), 320 = 192 + 128, 192 exactly;
  // M not a multiple of 128; K of one promotion group and of several.
  op.configs.push_back({"M1000_N448_K1024", {{"M", 1000}, {"N", 448}, {"K", 1024}}});
  op.configs.push_back({"M256_N320_K4096", {{"M", 256}, {"N", 320}, {"K", 4096}}});
  op.configs.push_back({"M130_N192_K512", {{"M", 130}, {"N", 192}, {"K", 512}}});
  const KernelUnderTest golden = CompileKernel(f.compiler, op.dir + "/" + op.golden, "golden");
  for (const char* params_json :
       {R"({"BM":128,"BN":192,"STAGES":5,"CLUSTER_M":1,"GROUP_M":16,"PROMOTE":2,"EPI":1,"STSM":0,"PERSISTENT":0})",
        R"({"BM":128,"BN":192,"STAGES":4,"CLUSTER_M":1,"GROUP_M":8,"PROMOTE":4,"EPI":1,"STSM":1,"PERSISTENT":1})",
        R"({"BM":128,"BN":192,"STAGES":5,"CLUSTER_M":1,"GROUP_M":16,"PROMOTE":1,"EPI":1,"STSM":0,"PERSISTENT":1})"})
    testing::ExpectInstanceCorrect(f.compiler, f.ev, op, golden, op.dir + "/families/wgmma_ws_fp8.cu", params_json, 2,
                                   "fp8");
}

TEST(GpuTensorCoreTiles, PersistentPrefillIsCorrectOnShortAndUnevenWork) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Fixture f;
  OperatorSpec op = LoadOp(OperatorsRoot() + "/attention_prefill_bf16");
  ASSERT_EQ(op.name, "attention_prefill_bf16");
  op.configs.clear();
  // One work tile in all (fewer than SMs: the grid is the tile count); 3 x 4 x 3 = 36 tiles of three
  // lengths; one query head per KV head; and more tiles than SMs, so blocks take several from the counter.
  op.configs.push_back({"B1_H1_KV1_S128_D128", {{"BATCH", 1}, {"HQ", 1}, {"HKV", 1}, {"S", 128}, {"D", 128}}});
  op.configs.push_back({"B3_H4_KV1_S384_D128", {{"BATCH", 3}, {"HQ", 4}, {"HKV", 1}, {"S", 384}, {"D", 128}}});
  op.configs.push_back({"B2_H8_KV8_S256_D128", {{"BATCH", 2}, {"HQ", 8}, {"HKV", 8}, {"S", 256}, {"D", 128}}});
  op.configs.push_back({"B2_H16_KV4_S1280_D128", {{"BATCH", 2}, {"HQ", 16}, {"HKV", 4}, {"S", 1280}, {"D", 128}}});
  const KernelUnderTest golden = CompileKernel(f.compiler, op.dir + "/" + op.golden, "golden");
  for (const char* params_json :
       {R"({"BN":128,"STAGES":2,"OVERLAP":1,"PINGPONG":1,"CLUSTER":1,"PERSISTENT":1,"EXP2":1,"EPI":2,"STSM":1})",
        R"({"BN":128,"STAGES":2,"OVERLAP":0,"PINGPONG":1,"CLUSTER":1,"PERSISTENT":1,"EXP2":0,"EPI":1,"STSM":0})",
        R"({"BN":64,"STAGES":3,"OVERLAP":1,"PINGPONG":0,"CLUSTER":1,"PERSISTENT":1,"EXP2":1,"EPI":0,"STSM":0})",
        R"({"BN":128,"STAGES":2,"OVERLAP":1,"PINGPONG":1,"CLUSTER":1,"PERSISTENT":0,"EXP2":1,"EPI":2,"STSM":0})",
        R"({"BN":128,"STAGES":2,"OVERLAP":1,"PINGPONG":1,"CLUSTER":1,"PERSISTENT":1,"EXP2":1,"EPI":2,"KV_MAJOR":1})",
        R"({"BN":64,"STAGES":2,"OVERLAP":1,"PINGPONG":1,"CLUSTER":1,"PERSISTENT":0,"EXP2":0,"EPI":0,"KV_MAJOR":1})"})
    testing::ExpectInstanceCorrect(f.compiler, f.ev, op, golden, op.dir + "/families/fa3_wgmma_ws.cu", params_json, 2,
                                   "prefill");
}

}  // namespace
}  // namespace forgek
