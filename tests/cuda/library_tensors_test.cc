// Tests of the tensor checks every library reference runs in Prepare (pure: no GPU needed).
#include "cuda/library_tensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace forgek {
namespace {

using ::testing::HasSubstr;

// Validation never dereferences the pointer: any non-null address stands in for device memory.
void* FakeDevicePointer() {
  static char byte;
  return &byte;
}

TensorMap GemmTensors() {
  return {{"A", {FakeDevicePointer(), DType::bf16, {64, 32}}},
          {"B", {FakeDevicePointer(), DType::bf16, {32, 48}}},
          {"C", {FakeDevicePointer(), DType::f32, {64, 48}}},
          {"scale", {FakeDevicePointer(), DType::f32, {}}},
          {"scale1", {FakeDevicePointer(), DType::f32, {1}}},
          {"scale2", {FakeDevicePointer(), DType::f32, {2}}},
          {"empty", {FakeDevicePointer(), DType::f32, {4, 0}}},
          {"unbound", {nullptr, DType::f32, {4}}}};
}

TEST(TensorRequirements, FindsATensorOfTheRightKind) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cublas.gemm_bf16", tensors);
  std::string err;
  const DeviceTensor* a = req.Get("A", {DType::bf16}, 2, &err);
  ASSERT_NE(a, nullptr) << err;
  EXPECT_EQ(a->shape, (std::vector<int64_t>{64, 32}));
  EXPECT_NE(req.Get("C", {DType::bf16, DType::f32}, 2, &err), nullptr) << err;
}

TEST(TensorRequirements, MissingTensorNamesItAndTheOnesPresent) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cublas.gemm_bf16", tensors);
  std::string err;
  EXPECT_EQ(req.Get("D", {DType::bf16}, 2, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("cublas.gemm_bf16: missing tensor 'D'"));
  EXPECT_THAT(err, HasSubstr("A, B, C"));
}

TEST(TensorRequirements, WrongDtypeNamesBoth) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cublas.gemm_bf16", tensors);
  std::string err;
  EXPECT_EQ(req.Get("C", {DType::bf16}, 2, &err), nullptr);
  EXPECT_EQ(err, "cublas.gemm_bf16: tensor 'C' is f32, expected bf16");
  EXPECT_EQ(req.Get("C", {DType::u32, DType::i32}, 2, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("expected u32 or i32"));
}

TEST(TensorRequirements, WrongRankEmptyDimensionOrNoMemoryIsAnError) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cub.scan_inclusive_f32", tensors);
  std::string err;
  EXPECT_EQ(req.Get("A", {DType::bf16}, 3, &err), nullptr);
  EXPECT_EQ(err, "cub.scan_inclusive_f32: tensor 'A' has shape [64, 32], expected 3 dimensions");
  EXPECT_EQ(req.Get("empty", {DType::f32}, 2, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("empty dimension"));
  EXPECT_EQ(req.Get("unbound", {DType::f32}, 1, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("no device memory"));
}

TEST(TensorRequirements, ShapeMismatchShowsBothShapes) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cublas.gemm_bf16", tensors);
  std::string err;
  EXPECT_TRUE(req.Dims("B", tensors.at("B"), {32, 48}, &err));
  EXPECT_FALSE(req.Dims("B", tensors.at("B"), {32, 64}, &err));
  EXPECT_EQ(err, "cublas.gemm_bf16: tensor 'B' has shape [32, 48], expected [32, 64]");
}

TEST(TensorRequirements, ScalarTensorsAreEmptyOrOneElementShapes) {
  const TensorMap tensors = GemmTensors();
  TensorRequirements req("cublaslt.gemm_fp8_e4m3", tensors);
  std::string err;
  EXPECT_NE(req.GetScalar("scale", DType::f32, &err), nullptr) << err;
  EXPECT_NE(req.GetScalar("scale1", DType::f32, &err), nullptr) << err;
  EXPECT_EQ(req.GetScalar("scale2", DType::f32, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("tensor 'scale2' has shape [2], expected one element"));
  EXPECT_EQ(req.GetScalar("scale", DType::bf16, &err), nullptr);
  EXPECT_THAT(err, HasSubstr("is f32, expected bf16"));
}

TEST(TensorRequirements, IntRangeIsChecked) {
  const TensorMap tensors;
  TensorRequirements req("cub.histogram_u8_256", tensors);
  std::string err;
  EXPECT_TRUE(req.FitsInt("N", 2147483647, &err));
  EXPECT_FALSE(req.FitsInt("N", 2147483648LL, &err));
  EXPECT_EQ(err, "cub.histogram_u8_256: N = 2147483648 does not fit the library's 32-bit int");
}

TEST(TensorRequirements, ShapeTextAndDtypeLabels) {
  EXPECT_EQ(ShapeText({}), "[]");
  EXPECT_EQ(ShapeText({3, 1, 4}), "[3, 1, 4]");
  EXPECT_STREQ(DTypeLabel(DType::e4m3), "e4m3");
  EXPECT_STREQ(DTypeLabel(DType::u8), "u8");
}

}  // namespace
}  // namespace forgek
