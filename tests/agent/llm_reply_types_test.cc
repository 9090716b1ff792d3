// Replies whose fields have the wrong type: a named error, the exchange recorded, nothing thrown.
#include <gtest/gtest.h>

#include "agent/llm_provider.h"
#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using nlohmann::json;
using testing::ReplyParseError;
using testing::ReplyWith;
using testing::VectorAddCandidate;

std::string OpenAi(const json& usage, const json& content = "hi", const json& choices = nullptr) {
  json doc = json::parse(testing::OpenAiReply("x"));
  doc["choices"][0]["message"]["content"] = content;
  doc["usage"] = usage;
  if (!choices.is_null()) doc["choices"] = choices;
  return doc.dump();
}

TEST(LlmReplyTypes, OpenAiWrongTypesNameTheField) {
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi({{"prompt_tokens", "12"}, {"completion_tokens", 3}})),
            "usage.prompt_tokens: expected a non-negative integer, got a string");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi({{"prompt_tokens", {1, 2}}, {"completion_tokens", 3}})),
            "usage.prompt_tokens: expected a non-negative integer, got an array");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi({{"prompt_tokens", 1}, {"completion_tokens", -3}})),
            "usage.completion_tokens: expected a non-negative integer, got a negative integer");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi("lots")), "usage: expected an object, got a string");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi(json::object(), 42)),
            "choices[0].message.content: expected a string, got an integer");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, OpenAi(json::object(), "x", json::object())),
            "choices: the response has no choices[0] object");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, R"({"choices": [{"message": "hi"}]})"),
            "choices[0].message: missing or not an object");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, R"({"choices": [{"message": {"content": "a"}, "finish_reason": 7}]})"),
            "choices[0].finish_reason: expected a string, got an integer");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::openai, "[1]"), "the response is not a JSON object (got an array)");
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(ReplyParseError(LlmProviderKind::openai, deep).find("nested deeper than 128 levels"), std::string::npos);
}

TEST(LlmReplyTypes, AnthropicWrongTypesNameTheField) {
  auto with = [](const std::string& key, const json& value) {
    json doc = json::parse(testing::AnthropicReply("x"));
    doc[key] = value;
    return doc.dump();
  };
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("usage", {{"input_tokens", "many"}})),
            "usage.input_tokens: expected a non-negative integer, got a string");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("usage", {{"input_tokens", 1}, {"output_tokens", 1.5}})),
            "usage.output_tokens: expected a non-negative integer, got a number");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("content", "text")),
            "content: the response has no content array");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("content", {{{"type", 3}}})),
            "content[0].type: expected a string, got an integer");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("content", {{{"type", "text"}, {"text", {1}}}})),
            "content[0].text: expected a string, got an array");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("content", {7})), "content[0]: expected an object");
  EXPECT_EQ(ReplyParseError(LlmProviderKind::anthropic, with("stop_reason", true)),
            "stop_reason: expected a string, got a boolean");
}

TEST(LlmReplyTypes, MissingUsageIsEstimatedNotAnError) {
  auto provider = MakeLlmProvider(LlmProviderKind::openai);
  LlmReply reply;
  std::string err;
  ASSERT_TRUE(provider->ParseReply(R"({"choices": [{"message": {"content": "hi"}}]})", &reply, &err)) << err;
  EXPECT_EQ(reply.text, "hi");
  EXPECT_FALSE(reply.has_usage);
}

class LlmReplyTypesAgent : public ::testing::TestWithParam<LlmProviderKind> {};

// The repro: prompt_tokens as a string threw type_error.302 out of the agent and left the run
// `running` with the exchange lost. Now Propose fails with the field named and the exchange is
// recorded; replaying that exchange fails the same way.
TEST_P(LlmReplyTypesAgent, StringTokenCountIsAClearFailureAndTheExchangeIsRecorded) {
  LlmProviderKind kind = GetParam();
  testing::FakeLlmServer server;
  TempDir dir;
  json doc = json::parse(testing::ReplyBody(kind, ReplyWith(VectorAddCandidate())));
  const char* field = kind == LlmProviderKind::anthropic ? "input_tokens" : "prompt_tokens";
  doc["usage"][field] = "1000";
  server.Push({200, {}, doc.dump()});
  testing::VectorRecorder recorder;
  std::string err;
  auto agent = LlmAgent::Create(testing::TestOptions(kind, server, dir), &recorder, &err);
  ASSERT_TRUE(agent) << err;
  OperatorSpec op = testing::VectorAddOperator();
  ProposalContext ctx;
  ctx.op = &op;
  ctx.arch = "sm90";
  ctx.max_candidates = 1;
  std::vector<Proposal> out;
  EXPECT_FALSE(agent->Propose(ctx, &out, &err));
  EXPECT_NE(err.find(std::string("usage.") + field + ": expected a non-negative integer, got a string"),
            std::string::npos)
      << err;
  ASSERT_EQ(recorder.exchanges.size(), 1u);
  EXPECT_EQ(recorder.exchanges[0].status, 200);
  EXPECT_NE(recorder.exchanges[0].error.find(field), std::string::npos);

  testing::VectorRecorder replayed;
  LlmOptions ro = testing::TestOptions(kind, server, dir);
  auto replay = ReplayAgent::Create(ro, recorder.exchanges, &replayed, &err);
  ASSERT_TRUE(replay) << err;
  std::string replay_err;
  EXPECT_FALSE(replay->Propose(ctx, &out, &replay_err));
  EXPECT_NE(replay_err.find(std::string("usage.") + field), std::string::npos) << replay_err;
}

INSTANTIATE_TEST_SUITE_P(Providers, LlmReplyTypesAgent,
                         ::testing::Values(LlmProviderKind::openai, LlmProviderKind::anthropic));

}  // namespace
}  // namespace forgek
