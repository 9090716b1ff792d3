// A model that only repeats itself does not end the run early: the rest of the budget tunes the
// families it wrote (their untried instances), and the progress and the summary say so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/llm_test_util.h"
#include "forgek/agent/llm.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "scripted_evaluator.h"
#include "test_util.h"
#include "toy_operator.h"

namespace forgek {
namespace {

const char* kGolden = R"CU(/* forgek
{ "name": "golden", "launches": [{"kernel": "golden", "grid": ["ceil_div(N, 128)"], "block": [128], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void golden(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i];
}
)CU";

// The one family the model knows: `blocks` block sizes times three REPS values.
std::string Family(const std::string& blocks) {
  return "/* forgek\n"
         "{ \"name\": \"copy_reps\", \"mechanisms\": [\"vector_16B\"], \"params\": {\"BLOCK\": [" + blocks +
         "], \"REPS\": [1, 2, 3]},\n"
         "  \"launches\": [{\"kernel\": \"copy\", \"grid\": [\"ceil_div(N, BLOCK)\"], \"block\": [\"BLOCK\"], "
         "\"args\": [\"x\", \"y\", \"N\"]}] }\n"
         "*/\n"
         "extern \"C\" __global__ void copy(const float* x, float* y, int N) {\n"
         "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
         "  for (int r = 0; r < REPS; ++r)\n"
         "    if (i < N) y[i] = x[i];\n"
         "}\n";
}

double Time(const KernelUnderTest& k, const std::string&) {
  if (!k.library.empty()) return 100.0;
  auto block = k.params.find("BLOCK");
  auto reps = k.params.find("REPS");
  return 100.0 - (block == k.params.end() ? 0 : block->second / 64.0) + (reps == k.params.end() ? 0 : reps->second);
}

struct OutOfIdeas {
  TempDir dir;
  OperatorSpec op;
  testing::FakeLlmServer server;
  Store store;
  std::vector<std::string> progress;
  RunSummary summary;

  // A run of `iterations` against a model that answers every request with the same family.
  explicit OutOfIdeas(const std::string& blocks, int iterations) {
    WriteFile(dir.file("toy/golden.cu"), kGolden);
    op = ToyOperator(dir.file("toy"), {});
    const std::string reply = testing::OpenAiReply(testing::ReplyWith(Family(blocks)));
    server.SetFallback([reply](const testing::ReceivedRequest&, int) { return testing::ScriptedResponse{200, {}, reply}; });
    std::string err;
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
    LlmOptions o = testing::TestOptions(LlmProviderKind::openai, server, dir);
    o.max_in_flight = 1;
    auto agent = LlmAgent::Create(o, nullptr, &err);
    EXPECT_TRUE(agent) << err;
    if (!agent) return;
    CompilerOptions copts;
    copts.cache_dir = dir.file("cache");
    copts.threads = 2;
    Compiler compiler(copts);
    ScriptedEvaluator evaluator(Time);
    RunServices services{agent.get(), &compiler, &evaluator, &store};
    services.progress = [this](const std::string& line) { progress.push_back(line); };
    RunOptions opts;
    opts.iterations = iterations;
    opts.batch = 1;
    EXPECT_TRUE(RunOptimisation(op, opts, services, &summary, &err)) << err;
  }
};

TEST(LlmOutOfIdeas, TheRestOfTheBudgetTunesTheFamiliesTheModelWrote) {
  OutOfIdeas run("64, 128, 256, 512", 10);  // 12 instances
  // Attempt 1 is the model's family, attempt 2 the search's (the tuning share); then every reply
  // repeats the family, and the search tunes it for the 8 attempts left.
  EXPECT_EQ(run.summary.attempts, 10);
  EXPECT_EQ(run.summary.stop_reason, StopReason::iterations);
  EXPECT_EQ(run.summary.status, "finished");
  EXPECT_EQ(run.server.requests().size(), 4u) << "the first request, then a feedback turn and its 2 repairs; the "
                                                 "model is not asked again";
  const std::string note = "the model had nothing new after attempt 2 (every reply repeated a kernel already tried): "
                           "the search tunes the families it wrote for the rest of the run";
  EXPECT_EQ(run.summary.agent_note, note);
  EXPECT_NE(RunSummaryText(run.summary).find("agent: " + note + "\n"), std::string::npos) << RunSummaryText(run.summary);
  ASSERT_EQ(run.progress.size(), 10u);
  EXPECT_EQ(run.progress[1].find("nothing new"), std::string::npos) << run.progress[1];
  EXPECT_NE(run.progress[2].find(" | " + note), std::string::npos) << run.progress[2];
  std::vector<AttemptRecord> attempts;
  std::string err;
  ASSERT_TRUE(run.store.ListAttempts(run.summary.run_id, &attempts, &err)) << err;
  ASSERT_EQ(attempts.size(), 10u);
  for (size_t i = 1; i < attempts.size(); ++i)
    EXPECT_EQ(attempts[i].rationale.rfind("search of the model's family", 0), 0u) << i << ": " << attempts[i].rationale;
}

TEST(LlmOutOfIdeas, ARunEndsExhaustedOnceTheFamiliesHaveNoUntriedInstance) {
  OutOfIdeas run("64", 10);  // 3 instances
  EXPECT_EQ(run.summary.attempts, 3);
  EXPECT_EQ(run.summary.stop_reason, StopReason::exhausted);
  EXPECT_EQ(run.summary.agent_note,
            "the model had nothing new after attempt 2 (every reply repeated a kernel already tried): the search "
            "tuned the families it wrote until none had an untried instance");
}

}  // namespace
}  // namespace forgek
