// End-to-end tests of `forgek run` without a GPU: meaningless values are usage errors that change
// nothing, a compile-only run says what it did, and a signal ends a run `interrupted`.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// A sandbox: a copy of tiny_scale, a store path that must not appear unless a run starts, and
// folders of its own for caches. No GPU is visible, even on a machine that has one.
struct Sandbox {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  std::string store = dir.file("data/store.db");
  std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.file("cache"), "XDG_DATA_HOME=" + dir.file("xdg"),
                                  "CUDA_VISIBLE_DEVICES="};
  CommandResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--operators", ops, "--store", store});
    return RunForgek(args, env);
  }
};

// A family of tiny_scale with 96 instances, so that a run does not run out of them in a test.
constexpr const char* kWideFamily = R"CU(/* forgek
{ "name": "scale_wide", "params": {"VEC": [4, 2, 1],
  "THREADS": [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480, 512,
              544, 576, 608, 640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 960, 992, 1024]},
  "constraints": ["N % VEC == 0"],
  "launches": [ {"kernel": "scale_vec", "grid": ["ceil_div(N, VEC * THREADS)"], "block": ["THREADS"],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void scale_vec(const float* __restrict__ x, float* __restrict__ y, float alpha, int n) {
  int base = (blockIdx.x * THREADS + threadIdx.x) * VEC;
  if (base >= n) return;
  for (int v = 0; v < VEC; ++v) y[base + v] = alpha * x[base + v];
}
)CU";

TEST(RunCli, MeaninglessValuesAreUsageErrorsThatNameTheOptionAndCreateNothing) {
  Sandbox box;
  struct Case {
    std::vector<std::string> args;
    const char* names;
  };
  const std::vector<Case> cases = {
      {{"run", "--op", "tiny_scale", "--deadline", "nan"}, "--deadline"},
      {{"run", "--op", "tiny_scale", "--deadline", "inf"}, "--deadline"},
      {{"run", "--op", "tiny_scale", "--deadline", "-3"}, "--deadline"},
      {{"run", "--op", "tiny_scale", "--gpus", "abc"}, "--gpus"},
      {{"run", "--op", "tiny_scale", "--max-cost", "-1"}, "--max-cost"},
      {{"run", "--op", "tiny_scale", "--max-cost", "nan"}, "--max-cost"},
      {{"run", "--op", "tiny_scale", "--from", "RUN"}, "--from"},
      {{"run", "--op", "tiny_scale", "--iterations", "-1"}, "--iterations"},
      {{"run", "--op", "tiny_scale", "--patience", "-1"}, "--patience"},
      {{"run", "--op", "tiny_scale", "--time", "nan"}, "--time"},
      {{"-q", "-v", "run", "--op", "tiny_scale"}, "--quiet"},
      {{"run", "--op", "tiny_scal"}, "--op"},
      {{"run", "--op", "tiny_scale", "--config", "smal"}, "--config"},
      {{"run", "--op", "tiny_scale", "--tune-share", "nan"}, "--tune-share"},
      {{"run", "--op", "tiny_scale", "--seed", "-1"}, "--seed"},
      {{"run", "--op", "tiny_scale", "--seed", "99999999999999999999999"}, "--seed"},
      {{"run", "--op", "tiny_scale", "--api-key-env", ""}, "--api-key-env"},
      {{"run", "--op", "tiny_scale", "--api-key-env", "1BAD"}, "--api-key-env"},
      {{"run", "--op", "tiny_scale", "--api-key-env", "A=B"}, "--api-key-env"},
      // A key in the base URL: refused with the URL masked, pointing at the key's variable.
      {{"run", "--op", "tiny_scale", "--agent", "llm", "--model", "m", "--base-url",
        "http://user:sk-URLSECRET@127.0.0.1:9/v1"},
       "'http://***@127.0.0.1:9/v1' carries a user name or password: remove it, and put the API key in $OPENAI_API_KEY"},
  };
  for (const Case& c : cases) {
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    SCOPED_TRACE(line);
    CommandResult r = box.Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 600u) << "a short answer, not a 309-digit bound: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(box.dir.file("data"))) << "a usage error creates no store";
    EXPECT_EQ(r.err.find("URLSECRET"), std::string::npos) << r.err;
  }
  // The global options that name places, given once each.
  CommandResult r = RunForgek({"--operators", box.ops, "--store", "", "run", "--op", "tiny_scale"}, box.env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--store"), std::string::npos) << r.err;
  r = RunForgek({"--operators", "/nonexistent/forgek-ops", "--store", box.store, "run", "--op", "tiny_scale"}, box.env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--operators /nonexistent/forgek-ops: no such folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(box.dir.file("data")));
}

TEST(RunCli, UnknownOperatorAndConfigSuggestTheCloseName) {
  Sandbox box;
  CommandResult r = box.Run({"run", "--op", "tiny_scal", "--compile-only"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tiny_scale"), std::string::npos) << r.err;
  r = box.Run({"run", "--op", "tiny_scale", "--config", "smal", "--compile-only"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'small'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("small, large"), std::string::npos) << r.err;
}

TEST(RunCli, ALogFileThatIsAFolderIsAUsageErrorReportedOnStderr) {
  Sandbox box;
  CommandResult r = box.Run({"--log-file", box.dir.path(), "version"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << "diagnostics never go to stdout: " << r.out;
  EXPECT_NE(r.err.find("--log-file " + box.dir.path()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("folder"), std::string::npos) << r.err;
}

TEST(RunCli, WithoutAGpuTheErrorPointsAtCompileOnly) {
  Sandbox box;
  CommandResult r = box.Run({"run", "--op", "tiny_scale", "--iterations", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--compile-only"), std::string::npos) << r.err;
}

TEST(RunCli, ACompileOnlyRunWhereNothingCompilesShowsTheErrorsAndExitsOne) {
  Sandbox box;
  WriteFile(box.ops + "/tiny_scale/families/vectorised.cu", R"CU(/* forgek
{ "name": "scale_broken", "params": {"VEC": [4, 2]},
  "launches": [ {"kernel": "scale_vec", "grid": [1], "block": [32], "args": ["x", "y", "alpha", "N"]} ] }
*/
extern "C" __global__ void scale_vec(const float* x, float* y, float alpha, int n) { y[0] = x[0] * undeclared_thing; }
)CU");
  CommandResult r = box.Run({"run", "--op", "tiny_scale", "--compile-only", "--iterations", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("every one of the 2 candidates failed to compile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("undeclared_thing"), std::string::npos) << "the compiler's words are shown: " << r.err;
  EXPECT_NE(r.err.find("compile_error"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("best 0.000x"), std::string::npos) << "nothing was timed: " << r.err;
  EXPECT_NE(r.out.find("attempts: 2"), std::string::npos) << "the summary is printed: " << r.out;
  // Exit 1, and the store says the same: failed, with the reason.
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(box.store, &err)) << err;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(store.ListRuns("tiny_scale", "", &runs, &err)) << err;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "failed");
  EXPECT_NE(nlohmann::json::parse(runs[0].summary_json).value("error", "").find("failed to compile"),
            std::string::npos)
      << runs[0].summary_json;
}

TEST(RunCli, ACompileOnlyProgressLineSaysCompiledWithoutASpeedup) {
  Sandbox box;
  CommandResult r = box.Run({"run", "--op", "tiny_scale", "--compile-only", "--iterations", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("attempt 1/2 | compiled |"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("best"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("slower"), std::string::npos) << r.err;
}

// Sends `signo` once the first attempt is reported, then checks the run's end and its resumption.
void InterruptAndResume(int signo) {
  Sandbox box;
  WriteFile(box.ops + "/tiny_scale/families/vectorised.cu", kWideFamily);
  std::vector<std::string> args = {"--operators", box.ops, "--store", box.store, "--json", "run", "--op",
                                   "tiny_scale", "--compile-only", "--iterations", "0", "--time", "10m",
                                   "--batch", "1"};
  CommandResult r = RunForgekSignalled(args, box.env, signo, "attempt 1 |");
  ASSERT_EQ(r.exit_code, 130) << r.err;
  nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["stop_reason"], "interrupted");
  EXPECT_EQ(summary["status"], "interrupted");
  std::string id = summary["run_id"];
  int attempts = summary["attempts"];
  EXPECT_GE(attempts, 1);

  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(box.store, &err, StoreMode::read_only)) << err;
  RunRecord run;
  bool found = false;
  ASSERT_TRUE(store.GetRun(id, &run, &found, &err)) << err;
  ASSERT_TRUE(found);
  EXPECT_EQ(run.status, "interrupted");

  r = box.Run({"--json", "run", "--resume", id, "--compile-only", "--iterations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["run_id"], id);
  EXPECT_EQ(summary["status"], "finished");
  std::vector<AttemptRecord> all;
  ASSERT_TRUE(store.ListAttempts(id, &all, &err)) << err;
  EXPECT_EQ(static_cast<int>(all.size()), attempts + 1);
}

TEST(RunCli, SigtermEndsARunInterruptedWithItsSummaryAndResumeContinuesIt) { InterruptAndResume(SIGTERM); }

TEST(RunCli, CtrlCEndsARunInterruptedWithItsSummaryAndResumeContinuesIt) { InterruptAndResume(SIGINT); }

// A Ctrl-C while the first compiles run: NVRTC runs only in compile children (in a process group
// of their own), so libnvrtc cannot replace forgek's handlers; the run ends `interrupted` with its
// summary and exit 130. The family compiles for seconds (templates instantiated 2^14 ways).
TEST(RunCli, CtrlCDuringTheFirstCompileKeepsItsMeaning) {
  Sandbox box;
  WriteFile(box.ops + "/tiny_scale/families/slow.cu", R"CU(/* forgek
{ "name": "scale_slow", "params": {"DEPTH": [14, 13]},
  "launches": [ {"kernel": "scale_slow", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "alpha", "N"]} ] }
*/
template <int N, int M> struct Walk {
  static constexpr long long value = Walk<N - 1, 2 * M>::value + Walk<N - 1, 2 * M + 1>::value;
};
template <int M> struct Walk<0, M> { static constexpr long long value = M; };
extern "C" __global__ void scale_slow(const float* x, float* y, float alpha, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + (Walk<DEPTH, 1>::value == 0 ? 1.f : 0.f);
}
)CU");
  std::vector<std::string> args = {"--operators", box.ops, "--store", box.store, "--json", "-v", "run", "--op",
                                   "tiny_scale", "--compile-only", "--iterations", "4", "--batch", "4"};
  CommandResult r = RunForgekSignalled(args, box.env, SIGINT, "run: tiny_scale");
  ASSERT_EQ(r.exit_code, 130) << r.err;
  nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["status"], "interrupted");
  EXPECT_EQ(summary["stop_reason"], "interrupted");
}

}  // namespace
}  // namespace forgek
