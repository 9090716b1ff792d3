// Tests of the library-reference registry: the ids this build provides and unknown ids.
#include "forgek/cuda/library_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace forgek {
namespace {

TEST(LibraryRegistry, ListsEveryIdSorted) {
  const std::vector<std::string> ids = LibraryReferenceIds();
  EXPECT_THAT(ids, ::testing::ElementsAre(
                       "cub.histogram_u8_256", "cub.radix_sort_pairs_u32", "cub.scan_inclusive_f32",
                       "cub.segmented_argmax_bf16", "cub.segmented_reduce_sum_f32", "cub.segmented_topk_f32",
                       "cublas.batched_gemm_bf16", "cublas.gemm_bf16", "cublas.gemv_bf16", "cublas.grouped_gemm_bf16",
                       "cublaslt.gemm_bias_gelu_bf16", "cublaslt.gemm_fp8_e4m3", "cudnn.conv2d_fprop_bf16",
                       "cudnn.conv2d_fprop_bf16_graph", "cudnn.depthwise_conv2d_bf16", "cudnn.sdpa_prefill_bf16",
                       "cudnn.softmax_fp32"));
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
}

TEST(LibraryRegistry, MakesEveryListedIdWithoutTouchingTheGpu) {
  for (const std::string& id : LibraryReferenceIds()) {
    std::string err;
    EXPECT_TRUE(HasLibraryReference(id)) << id;
    EXPECT_NE(MakeLibraryReference(id, &err), nullptr) << id << ": " << err;
  }
}

TEST(LibraryRegistry, UnknownIdIsAnErrorListingTheKnownOnes) {
  std::string err;
  EXPECT_FALSE(HasLibraryReference("cublas.gemm_fp16"));
  EXPECT_EQ(MakeLibraryReference("cublas.gemm_fp16", &err), nullptr);
  EXPECT_THAT(err, ::testing::HasSubstr("unknown library reference 'cublas.gemm_fp16'"));
  EXPECT_THAT(err, ::testing::HasSubstr("cublas.gemm_bf16"));
}

}  // namespace
}  // namespace forgek
