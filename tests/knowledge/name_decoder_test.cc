// Decoding real cuBLAS and CUTLASS kernel names into tile, k-step, stages, cluster and schedule.
#include <gtest/gtest.h>

#include "forgek/knowledge/knowledge.h"

namespace forgek {
namespace {

TEST(NameDecoder, NvjetFromTheH200Gemm) {
  // The kernel cuBLAS ran for bf16 8192^3 on H200 (docs/profiling.md): launched with block 384,
  // cluster 2x1x1. The name's 1x2 is the cluster in tile space (M x N): two CTAs along N.
  KernelNameFields f;
  ASSERT_TRUE(DecodeKernelName("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", &f));
  EXPECT_EQ(f.library, "nvjet");
  EXPECT_EQ(f.arch, "sm90");
  EXPECT_EQ(f.tile_m, 320);
  EXPECT_EQ(f.tile_n, 128);
  EXPECT_EQ(f.tile_k, 64);
  EXPECT_EQ(f.stages, 3);
  EXPECT_EQ(f.cluster_m, 1);
  EXPECT_EQ(f.cluster_n, 2);
  EXPECT_EQ(f.schedule, "cooperative");
  EXPECT_TRUE(f.warp_specialized);
  EXPECT_TRUE(f.tma);
  EXPECT_EQ(f.layout, "NNT");
  EXPECT_EQ(f.dtype, "h");
}

TEST(NameDecoder, NvjetPingpongWithoutCluster) {
  KernelNameFields f;
  ASSERT_TRUE(DecodeKernelName("nvjet_sm90_tss_128x256_64x4_2x1_v_bz_pingpong_TNT", &f));
  EXPECT_EQ(f.tile_m, 128);
  EXPECT_EQ(f.tile_n, 256);
  EXPECT_EQ(f.tile_k, 64);
  EXPECT_EQ(f.stages, 4);
  EXPECT_EQ(f.cluster_m, 2);
  EXPECT_EQ(f.cluster_n, 1);
  EXPECT_EQ(f.schedule, "pingpong");
}

TEST(NameDecoder, Sm90Xmma) {
  KernelNameFields f;
  ASSERT_TRUE(DecodeKernelName(
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1_warpgroupsize2x1x1_execute_segment_k_"
      "off_kernel__5x_cublas",
      &f));
  EXPECT_EQ(f.library, "xmma");
  EXPECT_EQ(f.arch, "sm90");
  EXPECT_EQ(f.tile_m, 128);
  EXPECT_EQ(f.tile_n, 256);
  EXPECT_EQ(f.tile_k, 64);
  EXPECT_EQ(f.cluster_m, 1);
  EXPECT_EQ(f.cluster_n, 2);
  EXPECT_EQ(f.cluster_k, 1);
  EXPECT_EQ(f.layout, "tn");
  EXPECT_NE(f.dtype.find("bf16bf16"), std::string::npos);
}

TEST(NameDecoder, Cutlass3xWarpSpecializedCooperative) {
  KernelNameFields f;
  ASSERT_TRUE(DecodeKernelName(
      "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_2x1x1_0_tnn_align8_warpspecialized_"
      "cooperative_epi_tma",
      &f));
  EXPECT_EQ(f.library, "cutlass");
  EXPECT_EQ(f.tile_m, 128);
  EXPECT_EQ(f.tile_n, 256);
  EXPECT_EQ(f.tile_k, 64);
  EXPECT_EQ(f.cluster_m, 2);
  EXPECT_EQ(f.cluster_n, 1);
  EXPECT_EQ(f.cluster_k, 1);
  EXPECT_EQ(f.stages, 0);  // "0": as many stages as fit
  EXPECT_EQ(f.layout, "tnn");
  EXPECT_EQ(f.schedule, "cooperative");
  EXPECT_TRUE(f.warp_specialized);
  EXPECT_TRUE(f.tma);
}

TEST(NameDecoder, Cutlass2MultistageName) {
  KernelNameFields f;
  ASSERT_TRUE(DecodeKernelName("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8", &f));
  EXPECT_EQ(f.tile_m, 256);
  EXPECT_EQ(f.tile_n, 128);
  EXPECT_EQ(f.tile_k, 32);
  EXPECT_EQ(f.stages, 3);
  EXPECT_EQ(f.layout, "nn");
}

TEST(NameDecoder, OwnKernelsAreNotDecoded) {
  KernelNameFields f;
  EXPECT_FALSE(DecodeKernelName("softmax_rows", &f));
  EXPECT_FALSE(DecodeKernelName("void at::native::vectorized_elementwise_kernel<4>(int)", &f));
  EXPECT_TRUE(f.fields.empty());
}

}  // namespace
}  // namespace forgek
