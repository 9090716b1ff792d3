// `forgek eval` and `forgek worker` end to end: usage errors, the no-GPU path, and (on a GPU) a
// full evaluation of the softmax seed over its three configs.
#include <gtest/gtest.h>

#include <filesystem>

#include "forgek/knowledge/store.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "forgek/core/paths.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Operators() {
  std::string found = FindDataDir("operators", "FORGEK_OPERATORS");
  return found.empty() ? SourceDir() + "/operators" : found;
}
std::string SoftmaxSeed() { return Operators() + "/softmax_fp32/seed.cu"; }

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

TEST(CliWorker, ProbePrintsOneJsonLine) {
  CommandResult r = RunForgek({"worker", "--probe"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("ok"));
  if (j["ok"]) {
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_GT(j["driver_version"].get<int>(), 0);
    EXPECT_FALSE(j["devices"].empty());
  } else {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_FALSE(j["error"].get<std::string>().empty());
  }
}

TEST(CliWorker, WithoutADriverTheProbeSaysSo) {
  if (HasGpu()) GTEST_SKIP() << "a driver is present";
  CommandResult r = RunForgek({"worker", "--probe"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "{\"error\":\"no NVIDIA driver: libcuda.so.1 not found\",\"ok\":false}\n");
}

TEST(CliWorker, ServeAnswersMalformedLinesAndShutsDown) {
  CommandResult r = RunForgek({"worker"}, {}, "garbage\n{\"id\":4,\"type\":\"frobnicate\"}\n{\"id\":5,\"type\":\"shutdown\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  for (size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(nlohmann::json::parse(r.out.substr(start, nl - start)));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["id"], -1);
  EXPECT_FALSE(lines[0]["ok"].get<bool>());
  EXPECT_EQ(lines[1]["id"], 4);
  EXPECT_NE(lines[1]["error"].get<std::string>().find("unknown request type"), std::string::npos);
  EXPECT_EQ(lines[2]["id"], 5);
  EXPECT_TRUE(lines[2]["ok"].get<bool>());
}

TEST(CliWorker, ProbeAndCalibrateTogetherIsAUsageError) {
  EXPECT_EQ(RunForgek({"worker", "--probe", "--calibrate"}).exit_code, 2);
}

TEST(CliEval, WithoutAGpuExitsOneWithOneLineReason) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present";
  CommandResult r = RunForgek({"--operators", Operators(), "eval", "--op", "softmax_fp32", "--kernel", SoftmaxSeed()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no GPU to evaluate on: no NVIDIA driver"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliEval, AgainstSealNeedsASealInTheStore) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  store.Close();
  CommandResult r = RunForgek({"--store", dir.file("store.db"), "--operators", Operators(), "eval", "--op",
                               "softmax_fp32", "--kernel", SoftmaxSeed(), "--against", "seal"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("holds no seal of softmax_fp32"), std::string::npos) << r.err;
  CommandResult missing = RunForgek({"--store", dir.file("none.db"), "--operators", Operators(), "eval", "--op",
                                     "softmax_fp32", "--kernel", SoftmaxSeed(), "--against", "seal"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db"))) << "a read-only check must not create the store";
}

TEST(CliEval, UsageErrors) {
  EXPECT_EQ(RunForgek({"eval", "--kernel", SoftmaxSeed()}).exit_code, 2);  // no --op
  CommandResult r = RunForgek({"--operators", Operators(), "eval", "--op", "softmax_fp32", "--kernel", SoftmaxSeed(),
                               "--params", "THREADS=abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("THREADS=abc"), std::string::npos) << r.err;
  r = RunForgek({"--operators", Operators(), "eval", "--op", "softmax_fp32", "--kernel", SoftmaxSeed(), "--params",
                 "NOPE=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NOPE"), std::string::npos) << r.err;
  r = RunForgek({"--operators", Operators(), "eval", "--op", "softmax_fp32", "--kernel", SoftmaxSeed(), "--config",
                 "1x1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("1x1"), std::string::npos) << r.err;
}

// The whole path on a GPU: compile golden, reference and candidate, check, time; under 3 s of
// evaluation after compiling is the goal (docs/PERFORMANCE.md).
TEST(GpuEval, SoftmaxSeedOverThreeConfigs) {
  if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
  auto start = std::chrono::steady_clock::now();
  CommandResult r = RunForgek({"--json", "--operators", Operators(), "eval", "--op", "softmax_fp32", "--kernel",
                               SoftmaxSeed()});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configs"].size(), 3u);
  for (const auto& c : j["configs"]) EXPECT_TRUE(c["correctness"]["ok"].get<bool>()) << c.dump();
  std::printf("[ eval     ] wall %.2f s, compile %.2f s, evaluate %.2f s, outcome %s, geomean %.3f\n", wall,
              j["compile_s"].get<double>(), j["eval_s"].get<double>(), j["outcome"].get<std::string>().c_str(),
              j["geomean_speedup"].get<double>());
  for (const auto& c : j["configs"])
    std::printf("[ eval     ] %s: %.2f us (noise %.2f%%) vs %.2f us, speedup %.3f, SOL %.1f%%\n",
                c["config"].get<std::string>().c_str(), c["candidate"]["median_us"].get<double>(),
                c["candidate"]["rel_noise"].get<double>() * 100, c["incumbent"]["median_us"].get<double>(),
                c["speedup"].get<double>(), c["sol_pct"].get<double>());
}

}  // namespace
}  // namespace forgek
