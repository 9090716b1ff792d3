// `forgek profile` end to end: usage errors, the no-GPU path, and (on a GPU) profiling cuBLAS's
// gemm and finding the observations in the store afterwards.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "forgek/core/paths.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Operators() {
  std::string found = FindDataDir("operators", "FORGEK_OPERATORS");
  return found.empty() ? SourceDir() + "/operators" : found;
}

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

TEST(CliProfile, ReferenceAndKernelTogetherOrNeitherIsAUsageError) {
  std::string seed = Operators() + "/softmax_fp32/seed.cu";
  CommandResult both = RunForgek({"--operators", Operators(), "profile", "--op", "softmax_fp32", "--reference",
                                  "--kernel", seed, "--no-store"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("exactly one of --reference and --kernel"), std::string::npos) << both.err;
  CommandResult neither = RunForgek({"--operators", Operators(), "profile", "--op", "softmax_fp32", "--no-store"});
  EXPECT_EQ(neither.exit_code, 2) << neither.err;
}

TEST(CliProfile, UnknownConfigIsAUsageError) {
  CommandResult r = RunForgek(
      {"--operators", Operators(), "profile", "--op", "gemm_bf16", "--reference", "--config", "nope", "--no-store"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no config 'nope'"), std::string::npos) << r.err;
}

TEST(CliProfile, WithoutAGpuItFailsWithOneLineAndStoresNothing) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present";
  TempDir dir;
  std::string store = dir.path() + "/store.db";
  CommandResult r = RunForgek({"--operators", Operators(), "--store", store, "profile", "--op", "gemm_bf16",
                               "--reference", "--no-store"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
  EXPECT_NE(access(store.c_str(), F_OK), 0) << "--no-store must not create the store";
}

TEST(GpuCliProfile, ReferenceGemmIsProfiledAndItsObservationsListed) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU";
  TempDir dir;
  std::string store = dir.path() + "/store.db";
  CommandResult r = RunForgek({"--operators", Operators(), "--store", store, "--json", "profile", "--op",
                               "gemm_bf16", "--reference", "--config", "4096^3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["profiles"].size(), 1u) << r.out;
  const nlohmann::json& p = j["profiles"][0];
  EXPECT_EQ(p["config"], "4096^3");
  EXPECT_GT(p["time_us"].get<double>(), 0);
  EXPECT_FALSE(p["launches"].empty());
  EXPECT_FALSE(p["observations"].empty());
  EXPECT_TRUE(p["bottleneck"].contains("kind"));

  CommandResult list = RunForgek({"--operators", Operators(), "--store", store, "knowledge", "list", "--op",
                                  "gemm_bf16"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  // cuBLAS's nvjet kernel runs a 2x1 cluster: an expert's mechanism, listed as a hypothesis to try.
  size_t row = list.out.find("thread_block_cluster");
  ASSERT_NE(row, std::string::npos) << list.out;
  std::string line = list.out.substr(row, list.out.find('\n', row) - row);
  EXPECT_NE(line.find("hypothesis"), std::string::npos) << line;
}

}  // namespace
}  // namespace forgek
