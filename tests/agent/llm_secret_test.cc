// The API key never shows: not in logs, not in errors, not in recorded exchanges.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using testing::kTestKey;
using testing::ReceivedRequest;
using testing::ReplyWith;
using testing::ScriptedResponse;
using testing::VectorAddCandidate;

// Routes the default logger to a string for the test's duration, at the most verbose level.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string str() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

class LlmSecretTest : public ::testing::TestWithParam<LlmProviderKind> {};

// "\r\n" in a key would end the auth header and start another: refused before any request, and
// the error names the variable, never the key.
TEST(LlmSecret, KeyWithControlCharactersIsRefusedWithoutEchoingIt) {
  testing::FakeLlmServer server;
  TempDir dir;
  LlmOptions o = testing::TestOptions(LlmProviderKind::openai, server, dir);
  for (std::string key : {std::string("sk-abcdef123456\r\nX-Injected: 1"), std::string("sk-abcdef\t123456"),
                          std::string("sk-abcdef123456\x7f")}) {
    setenv(testing::kTestKeyEnv, key.c_str(), 1);
    std::string err;
    auto agent = LlmAgent::Create(o, nullptr, &err);
    EXPECT_FALSE(agent);
    EXPECT_NE(err.find(testing::kTestKeyEnv), std::string::npos) << err;
    EXPECT_NE(err.find("control character"), std::string::npos) << err;
    EXPECT_EQ(err.find("abcdef"), std::string::npos) << err;
  }
  setenv(testing::kTestKeyEnv, kTestKey, 1);
  EXPECT_TRUE(server.requests().empty());
}

TEST_P(LlmSecretTest, KeyAppearsNowhere) {
  LlmProviderKind provider = GetParam();
  testing::FakeLlmServer server;
  TempDir dir;
  OperatorSpec op = testing::VectorAddOperator();
  std::string key = kTestKey;
  // A careless server echoes the key back in errors and even in a reply.
  server.Push({500, {}, R"({"error":{"message":"internal error for key )" + key + R"("}})"});
  server.Push({200, {}, testing::ReplyBody(provider, "Your key is " + key + ", no code.")});
  server.Push({200, {}, testing::ReplyBody(provider, ReplyWith(VectorAddCandidate()))});

  CapturedLog log;
  testing::VectorRecorder recorder;
  std::vector<std::string> errors;
  {
    std::string err;
    auto agent = LlmAgent::Create(testing::TestOptions(provider, server, dir), &recorder, &err);
    ASSERT_TRUE(agent) << err;
    ProposalContext ctx;
    ctx.op = &op;
    ctx.max_candidates = 1;
    std::vector<Proposal> out;
    ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
    ASSERT_EQ(out.size(), 1u);

    server.SetFallback([&](const ReceivedRequest&, int) {
      return ScriptedResponse{401, {}, R"({"error":{"message":"Incorrect API key provided: )" + key + R"("}})"};
    });
    EXPECT_FALSE(agent->Propose(ctx, &out, &err));
    errors.push_back(err);
  }
  // The key did reach the server (so the test would notice if it were never sent at all).
  ASSERT_FALSE(server.requests().empty());
  std::string sent = server.requests()[0].Header(provider == LlmProviderKind::anthropic ? "x-api-key" : "Authorization");
  EXPECT_NE(sent.find(key), std::string::npos);

  EXPECT_NE(errors[0].find("authentication failed"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("[redacted]"), std::string::npos) << errors[0];
  for (const auto& e : errors) EXPECT_EQ(e.find(key), std::string::npos) << e;
  std::string logged = log.str();
  EXPECT_FALSE(logged.empty());
  EXPECT_EQ(logged.find(key), std::string::npos) << logged;
  ASSERT_EQ(recorder.exchanges.size(), 3u);
  for (const auto& x : recorder.exchanges) {
    std::string json = LlmExchangeToJson(x);
    EXPECT_EQ(json.find(key), std::string::npos) << json;
    bool redacted = false;
    for (const auto& [name, value] : x.request_headers) redacted |= value.find("[redacted]") != std::string::npos;
    EXPECT_TRUE(redacted);
  }
}

TEST_P(LlmSecretTest, MissingKeyErrorNamesOnlyTheVariable) {
  testing::FakeLlmServer server;
  TempDir dir;
  LlmOptions o = testing::TestOptions(GetParam(), server, dir);
  o.key_env = "";
  const char* var = GetParam() == LlmProviderKind::anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  std::string saved = std::getenv(var) ? std::getenv(var) : "";
  unsetenv(var);
  std::string err;
  EXPECT_FALSE(LlmAgent::Create(o, nullptr, &err));
  EXPECT_NE(err.find(std::string(var) + " is not set"), std::string::npos) << err;
  if (!saved.empty()) setenv(var, saved.c_str(), 1);
}

// An empty key is said to be empty (not "not set"); a space or a byte beyond ASCII is refused like
// a control character, naming the variable and never the key.
TEST(LlmSecret, EmptyKeysAndKeysWithSpacesOrNonAsciiBytesAreRefusedWithoutEchoingThem) {
  testing::FakeLlmServer server;
  TempDir dir;
  LlmOptions o = testing::TestOptions(LlmProviderKind::openai, server, dir);
  setenv(testing::kTestKeyEnv, "", 1);
  std::string err;
  EXPECT_FALSE(LlmAgent::Create(o, nullptr, &err));
  EXPECT_NE(err.find(std::string(testing::kTestKeyEnv) + " is empty"), std::string::npos) << err;
  EXPECT_EQ(err.find("not set"), std::string::npos) << err;
  for (auto [key, what] : {std::pair<std::string, std::string>{" ", "a space"},
                           {"sk-abcdef 123456", "a space"},
                           {"sk-abcdef\xc3\xa9" "123456", "a byte beyond ASCII"}}) {
    setenv(testing::kTestKeyEnv, key.c_str(), 1);
    err.clear();
    EXPECT_FALSE(LlmAgent::Create(o, nullptr, &err)) << key;
    EXPECT_NE(err.find(testing::kTestKeyEnv), std::string::npos) << err;
    EXPECT_NE(err.find(what), std::string::npos) << err;
    EXPECT_EQ(err.find("abcdef"), std::string::npos) << err;
  }
  setenv(testing::kTestKeyEnv, kTestKey, 1);
  EXPECT_TRUE(server.requests().empty());
}

// A base URL with user:password@ is refused, quoted masked; a query string stays after the
// endpoint's path, and its values reach neither the errors, the log nor the recorded exchanges.
TEST_P(LlmSecretTest, BaseUrlSecretsAreRefusedOrMasked) {
  LlmProviderKind provider = GetParam();
  testing::FakeLlmServer server;
  TempDir dir;
  LlmOptions o = testing::TestOptions(provider, server, dir);
  o.base_url = "http://user:sk-URLSECRET99@127.0.0.1:" + std::to_string(server.port()) + "/v1";
  std::string err;
  EXPECT_FALSE(LlmAgent::Create(o, nullptr, &err));
  EXPECT_NE(err.find("http://***@127.0.0.1:"), std::string::npos) << err;
  EXPECT_NE(err.find("$" + std::string(testing::kTestKeyEnv)), std::string::npos) << err;
  EXPECT_EQ(err.find("URLSECRET"), std::string::npos) << err;

  o.base_url = server.base_url() + "/v1?key=sk-QUERYSECRET99";
  server.SetFallback([](const ReceivedRequest&, int) {
    return ScriptedResponse{401, {}, R"({"error":{"message":"bad key"}})"};
  });
  CapturedLog log;
  testing::VectorRecorder recorder;
  auto agent = LlmAgent::Create(o, &recorder, &err);
  ASSERT_TRUE(agent) << err;
  OperatorSpec op = testing::VectorAddOperator();
  ProposalContext ctx;
  ctx.op = &op;
  ctx.max_candidates = 1;
  std::vector<Proposal> out;
  EXPECT_FALSE(agent->Propose(ctx, &out, &err));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].path,
            provider == LlmProviderKind::anthropic ? "/v1/v1/messages" : "/v1/chat/completions")
      << "the endpoint's path goes before the query";
  EXPECT_NE(err.find("?key=***"), std::string::npos) << err;
  EXPECT_EQ(err.find("QUERYSECRET"), std::string::npos) << err;
  std::string logged = log.str();
  EXPECT_NE(logged.find("?key=***"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("QUERYSECRET"), std::string::npos) << logged;
  ASSERT_EQ(recorder.exchanges.size(), 1u);
  EXPECT_EQ(LlmExchangeToJson(recorder.exchanges[0]).find("QUERYSECRET"), std::string::npos);
  EXPECT_NE(recorder.exchanges[0].url.find("?key=***"), std::string::npos) << recorder.exchanges[0].url;
}

INSTANTIATE_TEST_SUITE_P(Providers, LlmSecretTest,
                         ::testing::Values(LlmProviderKind::openai, LlmProviderKind::anthropic),
                         [](const auto& param_info) { return std::string(LlmProviderName(param_info.param)); });

}  // namespace
}  // namespace forgek
