// scripts/scripted_model.py (the GPU machine's stand-in for a model) driving the llm agent on
// softmax_fp32 with real NVRTC compiles and a scripted evaluator: the run must climb the script's
// ladder through feedback, tune its family, and never stall. Skips without python3.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "forgek/agent/llm.h"
#include "forgek/core/operator_spec.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "forgek/core/subprocess.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

// Times that reward what the script's ladder changes: two passes over three, float4, block size.
double SoftmaxModel(const KernelUnderTest& k, const std::string&) {
  if (!k.library.empty() || k.manifest.launches.empty()) return 200.0;
  const std::string& kernel = k.manifest.launches.front().kernel;
  double threads = static_cast<double>(k.params.count("THREADS") ? k.params.at("THREADS") : 256);
  double size = threads == 512 ? 0.9 : threads == 1024 ? 0.95 : threads == 128 ? 1.2 : threads == 64 ? 1.5 : 1.0;
  if (kernel == "softmax_three_pass") return 400.0 * size;
  bool vec = k.params.count("VEC") && k.params.at("VEC") == 4;
  return (vec ? 150.0 : 250.0) * size;
}

TEST(ScriptedSoftmaxModel, ClimbsItsLadderThroughFeedback) {
  const std::string python = "/usr/bin/python3";
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << python;
  TempDir dir;
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/softmax_fp32", &op, &diags)) << FormatDiagnostics(diags);
  int port = 20000 + static_cast<int>(getpid() % 20000);
  SpawnOptions spawn;
  spawn.stdout_path = spawn.stderr_path = dir.file("model.log");
  pid_t model = 0;
  std::string err;
  ASSERT_TRUE(SpawnProcess({python, SourceDir() + "/scripts/scripted_model.py", "--port", std::to_string(port)}, spawn,
                           &model, &err))
      << err;
  struct Reaper {  // the model stops with the test, however it ends
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGTERM);
      int status = 0;
      waitpid(pid, &status, 0);
    }
  } reaper{model};
  std::this_thread::sleep_for(std::chrono::milliseconds(800));

  setenv("FORGEK_TEST_SCRIPTED_KEY", "dummy", 1);
  LlmOptions o;
  o.model = "scripted";
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.key_env = "FORGEK_TEST_SCRIPTED_KEY";
  o.prompts_dir = SourceDir() + "/knowledge/prompts";
  o.max_in_flight = 1;
  o.retry_base_delay_s = 0.2;
  auto agent = LlmAgent::Create(o, nullptr, &err);
  ASSERT_TRUE(agent) << err;
  Store store;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  CompilerOptions copts;
  copts.cache_dir = dir.file("cache");
  copts.threads = 2;
  Compiler compiler(copts);
  ScriptedEvaluator evaluator(SoftmaxModel);
  RunServices services{agent.get(), &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 16;
  opts.batch = 1;
  RunSummary s;
  bool ok = RunOptimisation(op, opts, services, &s, &err);
  ASSERT_TRUE(ok) << err;
  std::string text = RunSummaryText(s);
  EXPECT_EQ(s.attempts, 16) << StopReasonText(s) << "\n" << text;
  EXPECT_EQ(s.outcomes["compile_error"], 0) << text;
  EXPECT_GT(s.best_speedup, 1.3) << text;
  EXPECT_GE(s.lineage.size(), 3u) << text;
  std::printf("%s", text.c_str());
}

}  // namespace
}  // namespace forgek
