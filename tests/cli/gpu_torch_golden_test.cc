// The worker's PyTorch golden on a GPU: softmax_fp32 with a PyTorch problem as its golden checks its
// own CUDA golden on every config within the operator's tolerance, and an imported KernelBench
// problem evaluates its seed against its PyTorch golden, the golden's cost said.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "forgek/core/paths.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

std::string Operators() {
  std::string found = FindDataDir("operators", "FORGEK_OPERATORS");
  return found.empty() ? SourceDir() + "/operators" : found;
}

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

// softmax_fp32's computation as a KernelBench problem, its size constants the operator's params.
const char* kSoftmaxProblem = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)

M = 4096
N = 32768

def get_inputs():
    return [torch.randn(M, N) * 2]

def get_init_inputs():
    return []
)";

// Copies softmax_fp32 to `root` with golden.py as its golden; its golden.cu stays, as a kernel.
std::string SoftmaxWithTorchGolden(const std::string& root) {
  fs::create_directories(root);
  fs::copy(Operators() + "/softmax_fp32", root + "/softmax_fp32", fs::copy_options::recursive);
  WriteFile(root + "/softmax_fp32/golden.py", kSoftmaxProblem);
  std::string op = ReadFile(root + "/softmax_fp32/operator.json");
  op.replace(op.find("\"golden.cu\""), 11, "\"golden.py\"");
  WriteFile(root + "/softmax_fp32/operator.json", op);
  return root;
}

void PrintGoldenCost(const std::string& err) {
  for (size_t at = 0; (at = err.find("the PyTorch golden (", at)) != std::string::npos; ++at) {
    size_t start = err.rfind('\n', at);
    start = start == std::string::npos ? 0 : start + 1;
    std::printf("[ golden   ] %s\n", err.substr(start, err.find('\n', at) - start).c_str());
  }
}

// The CUDA golden, evaluated as a candidate against the PyTorch golden on every config: the check
// is the operator's own (rel_l2 and max_abs per element) on fresh seeds, poison and NaN included.
TEST(GpuTorchGolden, SoftmaxPyTorchGoldenAgreesWithItsCudaGoldenOnEveryConfig) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  TempDir tmp;
  const std::string root = SoftmaxWithTorchGolden(tmp.file("ops"));
  CommandResult v = RunForgek({"--operators", root, "ops", "validate", "--no-compile", "softmax_fp32"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  auto start = std::chrono::steady_clock::now();
  CommandResult r = RunForgek({"--json", "--operators", root, "eval", "--op", "softmax_fp32", "--kernel",
                               root + "/softmax_fp32/golden.cu", "--no-time", "--seeds", "2"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache")});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configs"].size(), 3u) << r.out;
  for (const auto& c : j["configs"]) {
    EXPECT_TRUE(c["correctness"]["ok"].get<bool>()) << c.dump();
    // The golden's cost travels with each config's result: one exchange per seed.
    ASSERT_TRUE(c.contains("golden_timing")) << c.dump();
    EXPECT_EQ(c["golden_timing"]["seeds"].get<int>(), 2) << c.dump();
    EXPECT_GT(c["golden_timing"]["total_ms"].get<double>(), 0) << c.dump();
    std::printf("[ golden   ] %s: CUDA golden vs PyTorch golden rel_l2 %.3g, max_abs %.3g\n",
                c["config"].get<std::string>().c_str(), c["correctness"]["rel_l2"].get<double>(),
                c["correctness"]["max_abs"].get<double>());
  }
  EXPECT_NE(r.err.find("the PyTorch golden ("), std::string::npos) << r.err;
  PrintGoldenCost(r.err);
  std::printf("[ golden   ] wall %.2f s\n", wall);
}

// The two ways the tensors cross to the helper (FORGEK_TORCH_TRANSPORT) on the same seeds: mapped
// where they lie (CUDA IPC) and copied through the host and the pipes. Both truths are the same
// float64 computation rounded to f32, but the two runs may reduce in another order, so an element
// may land one f32 ulp apart: on an H100 (2026-12-07) the CUDA golden's rel_l2 against them was 0
// and 4.5e-14, then 0 and 1.5e-12, at 4096x32768 (134M elements), identical on the other configs.
// One ulp of one element moves rel_l2 by about 2^-23 / sqrt(elements) (~1e-11 there), and max_abs
// by at most one ulp of 1 (softmax outputs are at most 1), 2^-23; the bounds below admit that for
// thousands of elements and nothing a wrong truth could give (rel_l2 >= 1e-3). The default takes
// CUDA IPC where torch computes on the GPU. Prints the cost of each per config.
TEST(GpuTorchGolden, CudaIpcAndThePipesGiveTheSameTruth) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  TempDir tmp;
  const std::string root = SoftmaxWithTorchGolden(tmp.file("ops"));
  std::map<std::string, nlohmann::json> by_transport;
  for (const std::string transport : {"cuda_ipc", "pipes", "auto"}) {
    CommandResult r = RunForgek({"--json", "--operators", root, "eval", "--op", "softmax_fp32", "--kernel",
                                 root + "/softmax_fp32/golden.cu", "--no-time", "--seeds", "2"},
                                {"XDG_CACHE_HOME=" + tmp.file("cache"), "FORGEK_TORCH_TRANSPORT=" + transport});
    ASSERT_EQ(r.exit_code, 0) << transport << ": " << r.out << r.err;
    by_transport[transport] = nlohmann::json::parse(r.out);
    PrintGoldenCost(r.err);
  }
  const nlohmann::json& ipc = by_transport["cuda_ipc"]["configs"];
  const nlohmann::json& pipes = by_transport["pipes"]["configs"];
  const nlohmann::json& automatic = by_transport["auto"]["configs"];
  ASSERT_EQ(ipc.size(), 3u);
  ASSERT_EQ(pipes.size(), 3u);
  ASSERT_EQ(automatic.size(), 3u);
  for (size_t i = 0; i < ipc.size(); ++i) {
    const std::string config = ipc[i]["config"];
    EXPECT_TRUE(ipc[i]["correctness"]["ok"].get<bool>()) << ipc[i].dump();
    EXPECT_TRUE(pipes[i]["correctness"]["ok"].get<bool>()) << pipes[i].dump();
    EXPECT_EQ(ipc[i]["golden_timing"]["transport"], "cuda_ipc") << ipc[i].dump();
    EXPECT_EQ(pipes[i]["golden_timing"]["transport"], "pipes") << pipes[i].dump();
    EXPECT_EQ(automatic[i]["golden_timing"]["transport"], "cuda_ipc") << automatic[i].dump();
    EXPECT_NEAR(ipc[i]["correctness"]["rel_l2"].get<double>(), pipes[i]["correctness"]["rel_l2"].get<double>(), 1e-9)
        << config;
    EXPECT_NEAR(ipc[i]["correctness"]["max_abs"].get<double>(), pipes[i]["correctness"]["max_abs"].get<double>(),
                std::ldexp(1.0, -23))
        << config;
    auto per_seed = [](const nlohmann::json& c, const char* key) {
      return c["golden_timing"][key].get<double>() / c["golden_timing"]["seeds"].get<double>();
    };
    std::printf("[ golden   ] %s per seed: CUDA IPC %.1f ms (torch %.1f ms), pipes %.1f ms (torch %.1f ms)\n",
                config.c_str(), per_seed(ipc[i], "total_ms"), per_seed(ipc[i], "compute_ms"),
                per_seed(pipes[i], "total_ms"), per_seed(pipes[i], "compute_ms"));
  }
}

// KernelBench's level-1 softmax at 1024 x 4096 imported as softmax_rows under tmp/ops, with the
// plain seed of the fixtures.
void ImportSoftmaxRows(const TempDir& tmp, const std::vector<std::string>& env) {
  CommandResult imp = RunForgek({"--operators", tmp.file("ops"), "ops", "import", "kernelbench",
                                 SourceDir() + "/tests/fixtures/import/kernelbench/level1_23_Softmax.py", "--seed",
                                 SourceDir() + "/tests/fixtures/import/seeds/softmax_seed.cu", "--sizes",
                                 "batch_size=1024,dim=4096", "--name", "softmax_rows"},
                                env);
  ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err;
}

TEST(GpuTorchGolden, AnImportedOperatorEvaluatesItsSeed) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  TempDir tmp;
  fs::create_directories(tmp.file("ops"));
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + tmp.file("cache")};
  ImportSoftmaxRows(tmp, env);
  if (HasFatalFailure()) return;
  CommandResult r = RunForgek({"--operators", tmp.file("ops"), "eval", "--op", "softmax_rows", "--kernel",
                               tmp.file("ops/softmax_rows/seed.cu"), "--seeds", "3"},
                              env);
  std::printf("%s", r.out.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("kernelbench"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the PyTorch golden ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ms per seed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("golden kernelbench: PyTorch on "), std::string::npos) << r.out;
  PrintGoldenCost(r.err);
}

// `forgek run` of an imported problem from an empty store: its seed is the incumbent, checked
// against the PyTorch golden; a few attempts of the default agent, then a clean end.
TEST(GpuTorchGolden, AnImportedOperatorRunsFromAnEmptyStore) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  TempDir tmp;
  fs::create_directories(tmp.file("ops"));
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + tmp.file("cache")};
  ImportSoftmaxRows(tmp, env);
  if (HasFatalFailure()) return;
  CommandResult r = RunForgek({"--operators", tmp.file("ops"), "--store", tmp.file("store.db"), "run", "--op",
                               "softmax_rows", "--iterations", "3"},
                              env);
  std::printf("%s", r.out.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(tmp.file("store.db")));
  // The run ends with PyTorch beside the kernel serving the config (the seal's or the seed's).
  EXPECT_NE(r.out.find("PyTorch beside the kernel that serves each config"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eager "), std::string::npos) << r.out;
  PrintGoldenCost(r.err);
}

// `eval --torch`: torch eager and torch.compile timed on the GPU beside the imported problem's seed,
// in the worker's statistics; torch.compile either timed or its reason given.
TEST(GpuTorchGolden, EvalTimesPyTorchEagerAndCompileBesideTheKernel) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  TempDir tmp;
  fs::create_directories(tmp.file("ops"));
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + tmp.file("cache")};
  ImportSoftmaxRows(tmp, env);
  if (HasFatalFailure()) return;
  CommandResult r = RunForgek({"--json", "--operators", tmp.file("ops"), "eval", "--op", "softmax_rows", "--kernel",
                               tmp.file("ops/softmax_rows/seed.cu"), "--torch"},
                              env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configs"].size(), 1u) << r.out;
  const nlohmann::json& c = j["configs"][0];
  ASSERT_TRUE(c.contains("torch")) << c.dump();
  const nlohmann::json& t = c["torch"];
  EXPECT_EQ(t["device"], "cuda") << t.dump();
  ASSERT_TRUE(t["eager"].contains("median_us")) << t.dump();
  EXPECT_GT(t["eager"]["median_us"].get<double>(), 0);
  EXPECT_GE(t["eager"]["samples"].get<int>(), 5);
  EXPECT_TRUE(t["compile"].contains("median_us") || t["compile"].contains("error")) << t.dump();
  std::printf("[ torch    ] softmax 1024x4096 f32: seed %.2f us; eager %s; compile %s; torch %s\n",
              c["candidate"]["median_us"].get<double>(), t["eager"].dump().c_str(), t["compile"].dump().c_str(),
              t["torch_version"].get<std::string>().c_str());
}

}  // namespace
}  // namespace forgek
