// Shared set-up of the llm agent tests: options pointing at a loopback server, replies per provider.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "agent/llm_provider.h"
#include "forgek/agent/llm.h"
#include "llm_test_server.h"
#include "test_util.h"

namespace forgek::testing {

inline constexpr const char* kTestKeyEnv = "FORGEK_TEST_LLM_KEY";
inline constexpr const char* kTestKey = "sk-forgek-test-SECRET-0123456789abcdef";

// Prices for the test model: $2 / $10 per million tokens; anything else costs the fallback.
inline std::string WriteTestPrices(const TempDir& dir) {
  std::string path = dir.file("prices.json");
  WriteFile(path, R"({"fallback": {"input_per_mtok": 100, "output_per_mtok": 100},
                      "models": {"test-model": {"input_per_mtok": 2, "output_per_mtok": 10}}})");
  return path;
}

inline LlmOptions TestOptions(LlmProviderKind provider, const FakeLlmServer& server, const TempDir& dir) {
  setenv(kTestKeyEnv, kTestKey, 1);
  LlmOptions o;
  o.provider = provider;
  o.model = "test-model";
  o.base_url = server.base_url();
  o.key_env = kTestKeyEnv;
  o.prompts_dir = SourceDir() + "/knowledge/prompts";
  o.prices_path = WriteTestPrices(dir);
  o.max_retries = 3;
  o.retry_base_delay_s = 0.01;
  o.retry_max_delay_s = 0.05;
  o.request_timeout_s = 10;
  return o;
}

inline std::string ReplyBody(LlmProviderKind provider, const std::string& text, int64_t in = 1000,
                             int64_t out = 500) {
  return provider == LlmProviderKind::anthropic ? AnthropicReply(text, in, out) : OpenAiReply(text, in, out);
}

// The error of a reply body that `kind`'s parser must refuse (a test failure when it accepts it).
inline std::string ReplyParseError(LlmProviderKind kind, const std::string& body) {
  auto provider = MakeLlmProvider(kind);
  LlmReply reply;
  std::string err;
  EXPECT_FALSE(provider->ParseReply(body, &reply, &err)) << body;
  return err;
}

// The text of the last message of a recorded request body (both APIs keep "messages").
inline std::string LastMessage(const std::string& request_body) {
  auto j = nlohmann::json::parse(request_body);
  return j["messages"].back()["content"].get<std::string>();
}

class VectorRecorder : public ExchangeRecorder {
 public:
  void Record(const LlmExchange& x) override { exchanges.push_back(x); }
  std::vector<LlmExchange> exchanges;
};

}  // namespace forgek::testing
