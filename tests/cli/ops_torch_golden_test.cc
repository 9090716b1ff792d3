// An operator whose golden is a PyTorch problem file: `ops validate` describes it and checks it
// against operator.json; a run refuses it at once, saying why.
#include <gtest/gtest.h>

#include <filesystem>

#include "operator_copy.h"
#include "test_util.h"
#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/torch_helper.h"
#include "forgek/seal/incumbent.h"

namespace forgek {
namespace {

// tiny_scale (y = 0.5 * x, N elements) with its golden as a KernelBench-style problem.
const char* kGolden = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (0.5 * x){CAST}

N = 1000

def get_inputs():
    return [torch.randn(N)]

def get_init_inputs():
    return []
)";

std::string TorchGoldenOperator(const std::string& root, const std::string& cast = "") {
  CopyTinyScale(root);
  std::string golden = kGolden;
  golden.replace(golden.find("{CAST}"), 6, cast);
  WriteFile(root + "/tiny_scale/golden.py", golden);
  std::string op = ReadFile(root + "/tiny_scale/operator.json");
  op.replace(op.find("\"golden.cu\""), 11, "\"golden.py\"");
  WriteFile(root + "/tiny_scale/operator.json", op);
  std::filesystem::remove(root + "/tiny_scale/golden.cu");
  return root;
}

CommandResult Validate(const std::string& root) {
  TempDir cache;
  return RunForgek({"--operators", root, "ops", "validate", "--no-compile", "tiny_scale"},
                   {"XDG_CACHE_HOME=" + cache.path()});
}

TEST(OpsTorchGolden, AgreeingProblemValidates) {
  TempDir tmp;
  CommandResult r = Validate(TorchGoldenOperator(tmp.path()));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "tiny_scale: ok\n");
}

TEST(OpsTorchGolden, DisagreeingDtypeIsNamed) {
  TempDir tmp;
  CommandResult r = Validate(TorchGoldenOperator(tmp.path(), ".double()"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("output 0 (y): the problem gives f64, operator.json says f32"), std::string::npos)
      << r.out << r.err;
}

TEST(OpsTorchGolden, BrokenProblemIsLocated) {
  TempDir tmp;
  CommandResult r = Validate(TorchGoldenOperator(tmp.path(), ")"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("golden.py:9:"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("syntax error"), std::string::npos) << r.out << r.err;
}

TEST(OpsTorchGolden, RunRefusesItAtOnce) {
  TempDir tmp;
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(TorchGoldenOperator(tmp.path()) + "/tiny_scale", &op, &diags)) << FormatDiagnostics(diags);
  EXPECT_TRUE(IsTorchGolden(op.golden));
  CompilerOptions copts;
  copts.threads = 1;
  copts.cache_dir = tmp.file("cache");
  Compiler compiler(copts);
  KernelUnderTest golden;
  std::string err;
  EXPECT_FALSE(PrepareGolden(op, "sm_90", compiler, &golden, &err));
  EXPECT_EQ(err, TorchGoldenNotRunMessage("tiny_scale", "golden.py"));
  EXPECT_NE(err.find("does not run yet"), std::string::npos);
}

TEST(OpsTorchGolden, RunCommandRefusesItBeforeTheStore) {
  TempDir tmp;
  const std::string root = TorchGoldenOperator(tmp.file("ops"));
  const std::string store = tmp.file("store.db");
  CommandResult r = RunForgek({"--operators", root, "run", "--op", "tiny_scale"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache"), "FORGEK_STORE=" + store});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("the golden of tiny_scale is a PyTorch problem (golden.py)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(store));
}

}  // namespace
}  // namespace forgek
