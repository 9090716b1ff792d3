// End-to-end `forgek run --agent llm --compile-only` against a loopback fake provider: budgets end
// a run normally, failures are recorded failed, and secrets in the base URL reach no output.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/llm_test_server.h"
#include "compile/landlock.h"
#include "forgek/knowledge/store.h"
#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

struct LlmSandbox {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  std::string store = dir.file("store.db");
  std::string log = dir.file("run.log");
  testing::FakeLlmServer server;
  std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.file("cache"), "XDG_DATA_HOME=" + dir.file("xdg"),
                                  "CUDA_VISIBLE_DEVICES=", "FORGEK_KNOWLEDGE=" + SourceDir() + "/knowledge",
                                  "OPENAI_API_KEY=sk-ENVSECRETKEY123", "FORGEK_LLM_BASE_URL="};
  CommandResult Run(const std::string& base_url, std::vector<std::string> extra,
                    std::vector<std::string> more_env = {}) const {
    std::vector<std::string> args = {"--operators", ops,   "--store",      store,   "--log-file", log,
                                     "run",         "--op", "tiny_scale",  "--agent", "llm",      "--model",
                                     "gpt-x",       "--base-url", base_url, "--compile-only", "--iterations", "2", "--batch", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<std::string> e = env;
    e.insert(e.end(), more_env.begin(), more_env.end());
    return RunForgek(args, e);
  }
  RunRecord OnlyRun() const {
    Store s;
    std::string err;
    EXPECT_TRUE(s.Open(store, &err)) << err;
    std::vector<RunRecord> runs;
    EXPECT_TRUE(s.ListRuns("tiny_scale", "", &runs, &err)) << err;
    EXPECT_EQ(runs.size(), 1u);
    return runs.empty() ? RunRecord{} : runs.front();
  }
};

// The repro: --max-tokens 5 and --max-cost 0.0001 ended rc 1 as if the agent had failed.
TEST(RunLlmCli, ASpentTokenOrCostBudgetEndsTheRunWithExitZero) {
  for (std::vector<std::string> cap : {std::vector<std::string>{"--max-tokens", "5"},
                                       std::vector<std::string>{"--max-cost", "0.0001"}}) {
    SCOPED_TRACE(cap[0]);
    LlmSandbox box;
    box.server.SetFallback([](const testing::ReceivedRequest&, int) {
      return testing::ScriptedResponse{200, {}, testing::OpenAiReply("no code here", 1000, 500)};
    });
    CommandResult r = box.Run(box.server.base_url() + "/v1", cap);
    std::string reason = cap[0].substr(2);  // max-tokens | max-cost
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("stopped by " + reason), std::string::npos) << r.out;
    EXPECT_EQ(box.server.requests().size(), 1u) << "nothing is sent once the cap is reached";
    RunRecord run = box.OnlyRun();
    EXPECT_EQ(run.status, "finished");
    EXPECT_EQ(nlohmann::json::parse(run.summary_json).value("stop_reason", ""), reason) << run.summary_json;
  }
}

// An agent failure exits 1 and is recorded failed with its reason; a query in the base URL is kept
// after the endpoint's path and its value reaches neither stderr, the log file nor the store.
TEST(RunLlmCli, AnAgentFailureIsRecordedFailedAndQuerySecretsAreMasked) {
  LlmSandbox box;
  box.server.SetFallback([](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{401, {}, R"({"error":{"message":"bad key"}})"};
  });
  CommandResult r = box.Run(box.server.base_url() + "/v1?key=sk-QUERYSECRET", {});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_EQ(box.server.requests().size(), 1u);
  EXPECT_EQ(box.server.requests()[0].path, "/v1/chat/completions");
  EXPECT_NE(r.err.find("authentication failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/chat/completions?key=***"), std::string::npos) << r.err;
  RunRecord run = box.OnlyRun();
  EXPECT_EQ(run.status, "failed");
  EXPECT_NE(nlohmann::json::parse(run.summary_json).value("error", "").find("authentication failed"),
            std::string::npos)
      << run.summary_json;
  std::string stored = ReadFile(box.store);
  if (fs::exists(box.store + "-wal")) stored += ReadFile(box.store + "-wal");
  for (const std::string& text : {r.out, r.err, ReadFile(box.log), stored}) {
    EXPECT_EQ(text.find("QUERYSECRET"), std::string::npos);
    EXPECT_EQ(text.find("ENVSECRETKEY"), std::string::npos);
  }
}

TEST(RunLlmCli, AnEmptyKeyIsSaidToBeEmpty) {
  LlmSandbox box;
  CommandResult r = box.Run(box.server.base_url() + "/v1", {}, {"OPENAI_API_KEY="});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("OPENAI_API_KEY is empty"), std::string::npos) << r.err;
  EXPECT_TRUE(box.server.requests().empty());
}

// A reply whose kernel includes a host file gets nothing of it back: not the file (relative to the
// working folder, or absolute), not the environment's key. Every request body, the store, stdout,
// stderr and the log are searched for the canaries; the compile error itself does reach the model.
TEST(RunLlmCli, AKernelIncludingHostFilesLeaksNothing) {
  if (LandlockAbi() == 0) GTEST_SKIP() << "this kernel has no Landlock: compiles cannot be confined here";
  LlmSandbox box;
  const std::string file_canary = "FILECANARY_5521";
  const std::string relative = "forgek_canary_" + std::to_string(getpid()) + ".env";
  const std::string in_working_folder = (fs::current_path() / relative).string();  // forgek runs here too
  WriteFile(in_working_folder, "OPENAI_API_KEY=" + file_canary + "\n");
  WriteFile(box.dir.file("abs.env"), "KEY=" + file_canary + "\n");
  auto kernel = [](const std::string& include_line) {
    return "/* forgek\n{ \"name\": \"scale_evil\", \"launches\": [ {\"kernel\": \"scale_evil\", \"grid\": [\"ceil_div(N, 256)\"],"
           " \"block\": [256], \"args\": [\"x\", \"y\", \"alpha\", \"N\"]} ] }\n*/\n"
           "#define S(...) #__VA_ARGS__\nstatic_assert(false, S(\n" + include_line + "\n));\n"
           "extern \"C\" __global__ void scale_evil(const float* x, float* y, float alpha, int n) {}\n";
  };
  const std::vector<std::string> replies = {kernel("#include \"" + relative + "\""),
                                            kernel("#include \"" + box.dir.file("abs.env") + "\""),
                                            kernel("#include \"/proc/self/environ\"")};
  box.server.SetFallback([&](const testing::ReceivedRequest&, int n) {
    return testing::ScriptedResponse{200, {}, testing::OpenAiReply(testing::ReplyWith(replies[n % replies.size()]))};
  });
  CommandResult r = box.Run(box.server.base_url() + "/v1", {});
  fs::remove(in_working_folder);
  std::vector<testing::ReceivedRequest> requests = box.server.requests();
  ASSERT_GE(requests.size(), 2u) << r.err;
  std::string bodies;
  for (const testing::ReceivedRequest& q : requests) bodies += q.body;
  EXPECT_TRUE(bodies.find("cannot open source file") != std::string::npos ||
              bodies.find("names an absolute path") != std::string::npos)
      << "the compile errors are sent back to the model: " << bodies.substr(0, 4000);
  std::string stored = ReadFile(box.store);
  if (fs::exists(box.store + "-wal")) stored += ReadFile(box.store + "-wal");
  for (const std::string& text : {bodies, r.out, r.err, ReadFile(box.log), stored}) {
    EXPECT_EQ(text.find(file_canary), std::string::npos);
    EXPECT_EQ(text.find("ENVSECRETKEY"), std::string::npos);
  }
}

}  // namespace
}  // namespace forgek
