// An operator whose golden is a PyTorch problem file: `ops validate` describes it and checks it
// against operator.json; a run or an eval hands it to the worker (and without a GPU stops where any
// run does), and without python3 and torch stops at once, saying why.
#include <gtest/gtest.h>

#include <sys/stat.h>

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

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

// A python3 that cannot see torch: the one the helper would use, without its site-packages (-S).
std::string PythonWithoutTorch(const TempDir& tmp) {
  TorchHelperPaths real;
  std::string err;
  EXPECT_TRUE(FindTorchHelper(&real, &err)) << err;
  const std::string path = tmp.file("python3");
  WriteFile(path, "#!/bin/sh\nexec " + real.python + " -S \"$@\"\n");
  chmod(path.c_str(), 0755);
  return path;
}

TEST(OpsTorchGolden, PrepareGoldenHandsTheProblemToTheWorker) {
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
  ASSERT_TRUE(PrepareGolden(op, "sm_90", compiler, &golden, &err)) << err;
  EXPECT_EQ(golden.label, "golden");
  EXPECT_TRUE(golden.cubin.empty());
  EXPECT_TRUE(golden.library.empty()) << golden.library;
  const std::string& file = golden.torch_file;
  ASSERT_FALSE(file.empty());
  EXPECT_TRUE(std::filesystem::path(file).is_absolute()) << file;
  EXPECT_TRUE(std::filesystem::equivalent(file, tmp.path() + "/tiny_scale/golden.py")) << file;
}

TEST(OpsTorchGolden, RunAndEvalGetPastTheGoldenToTheGpu) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present: the GpuTorchGolden tests run it";
  TempDir tmp;
  const std::string root = TorchGoldenOperator(tmp.file("ops"));
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + tmp.file("cache"), "FORGEK_STORE=" + tmp.file("store.db")};
  CommandResult r = RunForgek({"--operators", root, "run", "--op", "tiny_scale"}, env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("PyTorch problem"), std::string::npos) << r.err;
  CommandResult e = RunForgek({"--operators", root, "eval", "--op", "tiny_scale", "--kernel", root + "/tiny_scale/seed.cu"},
                              env);
  EXPECT_EQ(e.exit_code, 1) << e.out << e.err;
  EXPECT_NE(e.err.find("no GPU to evaluate on"), std::string::npos) << e.err;
  EXPECT_EQ(e.err.find("PyTorch problem"), std::string::npos) << e.err;
}

TEST(OpsTorchGolden, WithoutTorchRunAndEvalStopAtOnceBeforeTheStore) {
  TempDir tmp;
  const std::string root = TorchGoldenOperator(tmp.file("ops"));
  const std::string store = tmp.file("store.db");
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + tmp.file("cache"), "FORGEK_STORE=" + store,
                                        "FORGEK_PYTHON=" + PythonWithoutTorch(tmp)};
  const std::string says = "the golden of tiny_scale is a PyTorch problem (golden.py), which needs python3 with torch: "
                           "PyTorch is not installed for";
  CommandResult r = RunForgek({"--operators", root, "run", "--op", "tiny_scale"}, env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(store));
  CommandResult e = RunForgek({"--operators", root, "eval", "--op", "tiny_scale", "--kernel", root + "/tiny_scale/seed.cu"},
                              env);
  EXPECT_EQ(e.exit_code, 1) << e.out << e.err;
  EXPECT_NE(e.err.find(says), std::string::npos) << e.err;
  CommandResult b = RunForgek({"--operators", root, "batch", "tiny_scale"}, env);
  EXPECT_EQ(b.exit_code, 1) << b.out << b.err;
  EXPECT_NE(b.err.find(says), std::string::npos) << b.err;
}

}  // namespace
}  // namespace forgek
