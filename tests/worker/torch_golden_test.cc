// The worker's PyTorch golden on the host (no GPU): inputs in, the golden's outputs out through a
// real `serve` process, against the formula on the CPU; its checks of what comes back; and a
// python3 without torch failing the first request at once, saying so.
#include "worker/torch_golden.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "test_util.h"

namespace forgek::worker {
namespace {

// y = softmax(x) over rows, sizes M and N (softmax_fp32's names); and a second output, x * 2.
const char* kProblem = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1), x * 2

M = 4096
N = 32768

def get_inputs():
    return [torch.randn(M, N)]

def get_init_inputs():
    return []
)";

TorchTensor Input(int rows, int cols, std::vector<float>* x) {
  x->resize(static_cast<size_t>(rows) * cols);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f;
  return {"x", "f32", {rows, cols}, std::string(reinterpret_cast<const char*>(x->data()), x->size() * 4)};
}

std::vector<TruthSpec> Truths(int rows, int cols) {
  return {{"y", DType::f32, {rows, cols}}, {"twice", DType::f32, {rows, cols}}};
}

TEST(TorchGolden, ComputesTheOutputsOfEachConfigOnOneHelper) {
  TempDir dir;
  WriteFile(dir.file("golden.py"), kProblem);
  TorchGolden golden;
  for (auto [rows, cols] : {std::pair<int, int>{3, 16}, {5, 33}}) {
    SCOPED_TRACE(cols);
    std::vector<float> x;
    std::vector<TorchTensor> out;
    TorchRunInfo info;
    std::string err;
    ASSERT_TRUE(golden.Compute(dir.file("golden.py"), {{"M", rows}, {"N", cols}}, {Input(rows, cols, &x)},
                               Truths(rows, cols), &out, &info, &err))
        << err;
    ASSERT_EQ(out.size(), 2u);
    const float* y = reinterpret_cast<const float*>(out[0].bytes.data());
    const float* twice = reinterpret_cast<const float*>(out[1].bytes.data());
    for (int r = 0; r < rows; ++r) {
      double max = -INFINITY, sum = 0;
      for (int c = 0; c < cols; ++c) max = std::max(max, static_cast<double>(x[r * cols + c]));
      for (int c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - max);
      for (int c = 0; c < cols; ++c) {
        EXPECT_FLOAT_EQ(y[r * cols + c], static_cast<float>(std::exp(x[r * cols + c] - max) / sum));
        EXPECT_EQ(twice[r * cols + c], 2 * x[r * cols + c]);
      }
    }
  }
}

TEST(TorchGolden, WhatComesBackMustBeTheTruthsAskedFor) {
  TempDir dir;
  WriteFile(dir.file("golden.py"), kProblem);
  TorchGolden golden;
  std::vector<float> x;
  std::vector<TorchTensor> out;
  TorchRunInfo info;
  std::string err;
  EXPECT_FALSE(golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {Input(2, 4, &x)}, {Truths(2, 4)[0]},
                              &out, &info, &err));
  EXPECT_NE(err.find("the PyTorch golden gave 2 outputs, the operator has 1"), std::string::npos) << err;
  std::vector<TruthSpec> shapes = Truths(2, 4);
  shapes[1].shape = {4, 2};
  EXPECT_FALSE(golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {Input(2, 4, &x)}, shapes, &out, &info,
                              &err));
  EXPECT_NE(err.find("output 1 (twice): the PyTorch golden gave shape [2, 4], the config's is [4, 2]"),
            std::string::npos)
      << err;
  std::vector<TruthSpec> ints = Truths(2, 4);
  ints[0].dtype = DType::i32;
  EXPECT_FALSE(golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {Input(2, 4, &x)}, ints, &out, &info,
                              &err));
  EXPECT_NE(err.find("output 0 (y): the PyTorch golden gave f32, the golden's i32 was expected"), std::string::npos)
      << err;
  // A request the helper refuses (a missing input) is an error of that request; the helper goes on.
  EXPECT_FALSE(golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {}, Truths(2, 4), &out, &info, &err));
  EXPECT_NE(err.find("the PyTorch golden " + dir.file("golden.py") + ": "), std::string::npos) << err;
  EXPECT_TRUE(golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {Input(2, 4, &x)}, Truths(2, 4), &out,
                             &info, &err))
      << err;
}

TEST(TorchGolden, WithoutTorchTheFirstRequestFailsAtOnceSayingSo) {
  TorchHelperPaths real;
  std::string err;
  ASSERT_TRUE(FindTorchHelper(&real, &err)) << err;
  TempDir dir;
  WriteFile(dir.file("golden.py"), kProblem);
  WriteFile(dir.file("python3"), "#!/bin/sh\nexec " + real.python + " -S \"$@\"\n");
  chmod(dir.file("python3").c_str(), 0755);
  const char* before = std::getenv("FORGEK_PYTHON");
  const std::string saved = before ? before : "";
  setenv("FORGEK_PYTHON", dir.file("python3").c_str(), 1);
  TorchGolden golden;
  std::vector<float> x;
  std::vector<TorchTensor> out;
  TorchRunInfo info;
  bool ok = golden.Compute(dir.file("golden.py"), {{"M", 2}, {"N", 4}}, {Input(2, 4, &x)}, Truths(2, 4), &out, &info,
                           &err);
  if (before) setenv("FORGEK_PYTHON", saved.c_str(), 1);
  else unsetenv("FORGEK_PYTHON");
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("did not start (exit 1)"), std::string::npos) << err;
  EXPECT_NE(err.find("PyTorch is not installed for"), std::string::npos) << err;
}

TEST(TorchGolden, WireDtypesAreForgeksOwnNames) {
  EXPECT_EQ(TorchWireDtype(DType::f32), "f32");
  EXPECT_EQ(TorchWireDtype(DType::bf16), "bf16");
  EXPECT_EQ(TorchWireDtype(DType::i64), "i64");
  EXPECT_EQ(TorchWireDtype(DType::e4m3), "");
  EXPECT_EQ(TorchWireDtype(DType::u32), "");
}

}  // namespace
}  // namespace forgek::worker
