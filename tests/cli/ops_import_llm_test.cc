// `forgek ops import ... --agent llm`: the seed asked of a (scripted) model. The prompt shows the
// problem as what to compute; a reply that does not compile goes back with the compiler's errors;
// nothing is written when no reply compiles; the key never reaches the output.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/llm_test_server.h"
#include "test_util.h"

namespace forgek {
namespace {

const char* kKey = "sk-test-key-4242424242";

const std::string kSeed = R"SEED(/* forgek
{ "name": "relu_llm_seed",
  "params": {"THREADS": 256},
  "launches": [ {"kernel": "relu_llm_seed", "grid": ["ceil_div(batch_size * dim, THREADS)"], "block": ["THREADS"],
                 "args": ["x", "out", "batch_size", "dim"]} ] }
*/
extern "C" __global__ void relu_llm_seed(const float* x, float* out, int rows, int cols) {
  long i = (long)blockIdx.x * THREADS + threadIdx.x;
  if (i < (long)rows * cols) out[i] = x[i] > 0.f ? x[i] : 0.f;
}
)SEED";

// The same with a name the compiler does not know.
std::string Broken() {
  std::string s = kSeed;
  s.replace(s.find("x[i] > 0.f"), 10, "x[i] > zero_level");
  return s;
}

std::string Relu() { return SourceDir() + "/tests/fixtures/import/kernelbench/level1_19_ReLU.py"; }

CommandResult Import(const TempDir& tmp, const testing::FakeLlmServer& server, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--operators", tmp.file("ops"), "ops", "import", "kernelbench", Relu(),
                                   "--sizes", "batch_size=16,dim=256", "--name", "relu_llm"};
  args.insert(args.end(), extra.begin(), extra.end());
  if (server.port() > 0) {
    for (const char* a : {"--agent", "llm", "--model", "m1", "--base-url"}) args.push_back(a);
    args.push_back(server.base_url() + "/v1");
  }
  return RunForgek(args, {"XDG_CACHE_HOME=" + tmp.file("cache"), "FORGEK_KNOWLEDGE=" + SourceDir() + "/knowledge",
                          std::string("OPENAI_API_KEY=") + kKey, "FORGEK_LLM_BASE_URL="});
}

TEST(OpsImportLlm, AReplyThatDoesNotCompileGoesBackAndTheNextIsTheSeed) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  testing::FakeLlmServer server;
  server.Push({200, {{"Content-Type", "application/json"}}, testing::OpenAiReply(testing::ReplyWith(Broken()))});
  server.Push({200, {{"Content-Type", "application/json"}}, testing::OpenAiReply(testing::ReplyWith(kSeed))});
  CommandResult r = Import(tmp, server, {});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadFile(tmp.file("ops/relu_llm/seed.cu")), kSeed);
  const std::vector<testing::ReceivedRequest> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  // The model saw the problem as what to compute, then the compiler's complaint about its reply.
  EXPECT_NE(requests[0].body.find("torch.relu"), std::string::npos) << requests[0].body.substr(0, 2000);
  EXPECT_NE(requests[1].body.find("zero_level"), std::string::npos);
  EXPECT_NE(requests[1].body.find("compile_error"), std::string::npos);
  CommandResult v = RunForgek({"--operators", tmp.file("ops"), "ops", "validate", "relu_llm"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_EQ((r.out + r.err).find(kKey), std::string::npos);
}

TEST(OpsImportLlm, NoReplyThatCompilesWritesNothing) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  testing::FakeLlmServer server;
  server.SetFallback([](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{200, {{"Content-Type", "application/json"}},
                                     testing::OpenAiReply(testing::ReplyWith(Broken()))};
  });
  CommandResult r = Import(tmp, server, {"--replies", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("no seed from the model (nothing written)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("zero_level"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp.file("ops")));
  EXPECT_EQ((r.out + r.err).find(kKey), std::string::npos);
}

TEST(OpsImportLlm, TheSeedComesFromExactlyOneSource) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  WriteFile(tmp.file("seed.cu"), kSeed);
  testing::FakeLlmServer server;
  CommandResult both = Import(tmp, server, {"--seed", tmp.file("seed.cu")});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  // A definition has no seed forgek writes: one of the two is needed.
  CommandResult neither = RunForgek({"--operators", tmp.file("ops"), "ops", "import", "flashinfer",
                                     SourceDir() + "/tests/fixtures/import/flashinfer/rmsnorm_d4096.json", "--sizes",
                                     "batch_size=4", "--scalars", "eps=1e-6"},
                                    {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(neither.exit_code, 2) << neither.err;
  CommandResult no_model = RunForgek({"--operators", tmp.file("ops"), "ops", "import", "kernelbench", Relu(),
                                      "--agent", "llm"},
                                     {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_NE(no_model.err.find("--agent llm needs --model"), std::string::npos) << no_model.err;
  EXPECT_TRUE(server.requests().empty());
  EXPECT_TRUE(std::filesystem::is_empty(tmp.file("ops")));
}

}  // namespace
}  // namespace forgek
