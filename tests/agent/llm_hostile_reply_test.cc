// Replies a hostile or broken provider may send: usage counts that would wrap the budget, an
// error object with HTTP 200, keys given twice.
#include <gtest/gtest.h>

#include <cstdint>

#include "agent/llm_provider.h"
#include "forgek/core/token_count.h"
#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using nlohmann::json;
using testing::ReplyParseError;
using testing::ReplyWith;
using testing::VectorAddCandidate;

std::string WithUsage(LlmProviderKind kind, const json& in, const json& out) {
  json doc = json::parse(testing::ReplyBody(kind, "hi"));
  bool anthropic = kind == LlmProviderKind::anthropic;
  doc["usage"][anthropic ? "input_tokens" : "prompt_tokens"] = in;
  doc["usage"][anthropic ? "output_tokens" : "completion_tokens"] = out;
  return doc.dump();
}

ProposalContext ContextFor(const OperatorSpec& op) {
  ProposalContext ctx;
  ctx.op = &op;
  ctx.arch = "sm90";
  ctx.max_candidates = 1;
  return ctx;
}

class LlmHostileReply : public ::testing::TestWithParam<LlmProviderKind> {};

TEST_P(LlmHostileReply, UsageAboveTheBoundIsMalformedAndNamesTheField) {
  LlmProviderKind kind = GetParam();
  const char* in_field = kind == LlmProviderKind::anthropic ? "usage.input_tokens" : "usage.prompt_tokens";
  const char* out_field = kind == LlmProviderKind::anthropic ? "usage.output_tokens" : "usage.completion_tokens";
  uint64_t int64_max = static_cast<uint64_t>(INT64_MAX);
  for (uint64_t huge : {int64_max, static_cast<uint64_t>(kMaxTokenCount) + 1, uint64_t{18446744073709551615u}}) {
    std::string err = ReplyParseError(kind, WithUsage(kind, huge, 5));
    EXPECT_EQ(err.rfind(std::string(in_field) + ": ", 0), 0u) << err;
    EXPECT_NE(err.find("more than any request uses"), std::string::npos) << err;
    err = ReplyParseError(kind, WithUsage(kind, 5, huge));
    EXPECT_EQ(err.rfind(std::string(out_field) + ": ", 0), 0u) << err;
  }
  // The bound itself is accepted.
  auto provider = MakeLlmProvider(kind);
  LlmReply reply;
  std::string err;
  ASSERT_TRUE(provider->ParseReply(WithUsage(kind, kMaxTokenCount, kMaxTokenCount), &reply, &err)) << err;
  EXPECT_EQ(reply.input_tokens, kMaxTokenCount);
  EXPECT_EQ(reply.output_tokens, kMaxTokenCount);
}

// The repro: usage of 2^63-1 wrapped prompt + completion to a negative sum below --max-tokens 100,
// and seven requests went out. Now such a reply fails the proposal and nothing is counted from it.
TEST_P(LlmHostileReply, WrappingUsageDoesNotPassTheTokenCap) {
  LlmProviderKind kind = GetParam();
  testing::FakeLlmServer server;
  TempDir dir;
  json doc = json::parse(testing::ReplyBody(kind, ReplyWith(VectorAddCandidate())));
  bool anthropic = kind == LlmProviderKind::anthropic;
  doc["usage"][anthropic ? "input_tokens" : "prompt_tokens"] = INT64_MAX;
  doc["usage"][anthropic ? "output_tokens" : "completion_tokens"] = INT64_MAX;
  server.SetFallback([body = doc.dump()](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{200, {}, body};
  });
  LlmOptions o = testing::TestOptions(kind, server, dir);
  o.max_tokens = 100;
  std::string err;
  auto agent = LlmAgent::Create(o, nullptr, &err);
  ASSERT_TRUE(agent) << err;
  OperatorSpec op = testing::VectorAddOperator();
  std::vector<Proposal> out;
  EXPECT_FALSE(agent->Propose(ContextFor(op), &out, &err));
  EXPECT_NE(err.find("malformed response"), std::string::npos) << err;
  EXPECT_NE(err.find(anthropic ? "usage.input_tokens" : "usage.prompt_tokens"), std::string::npos) << err;
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(agent->Spent().input_tokens, 0) << "nothing is counted from a malformed reply";
  EXPECT_EQ(agent->Spent().output_tokens, 0);
}

// Counts up to the bound are taken, and the first reply that reaches the cap ends the agent:
// the next Propose sends nothing and says which budget is spent.
TEST_P(LlmHostileReply, TheFirstReplyThatReachesTheCapStopsTheAgent) {
  LlmProviderKind kind = GetParam();
  testing::FakeLlmServer server;
  TempDir dir;
  server.Push({200, {}, testing::ReplyBody(kind, ReplyWith(VectorAddCandidate()), kMaxTokenCount, kMaxTokenCount)});
  LlmOptions o = testing::TestOptions(kind, server, dir);
  o.max_tokens = 100;
  std::string err;
  auto agent = LlmAgent::Create(o, nullptr, &err);
  ASSERT_TRUE(agent) << err;
  EXPECT_EQ(agent->BudgetSpent(), StopReason::none);
  OperatorSpec op = testing::VectorAddOperator();
  std::vector<Proposal> out;
  ASSERT_TRUE(agent->Propose(ContextFor(op), &out, &err)) << err;
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(agent->Spent().input_tokens, kMaxTokenCount);
  EXPECT_EQ(agent->Spent().output_tokens, kMaxTokenCount);
  EXPECT_EQ(agent->BudgetSpent(), StopReason::max_tokens);
  EXPECT_FALSE(agent->Propose(ContextFor(op), &out, &err));
  EXPECT_NE(err.find("--max-tokens"), std::string::npos) << err;
  EXPECT_EQ(server.requests().size(), 1u) << "no request once the cap is reached";
}

TEST_P(LlmHostileReply, AnErrorObjectWithStatus200ReportsTheProvidersMessageCleaned) {
  LlmProviderKind kind = GetParam();
  json doc = {{"error", {{"type", "rate_limit"}, {"message", "Quota exceeded\x1b[2J for\nthis key"}}}};
  if (kind == LlmProviderKind::anthropic) doc["type"] = "error";
  std::string err = ReplyParseError(kind, doc.dump());
  EXPECT_NE(err.find("the provider answered with an error instead of a reply: Quota exceeded"), std::string::npos)
      << err;
  EXPECT_NE(err.find("for this key"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "control characters are stripped";
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_EQ(err.find("choices"), std::string::npos) << err;

  doc["error"]["message"] = std::string(100000, 'x');
  err = ReplyParseError(kind, doc.dump());
  EXPECT_LT(err.size(), 500u) << "the message is bounded";
  EXPECT_NE(err.find("xxx..."), std::string::npos) << err;

  doc["error"] = "plain error text";
  EXPECT_NE(ReplyParseError(kind, doc.dump()).find("plain error text"), std::string::npos);
}

// A key given twice is ambiguous (which usage does the budget count?): refused, as operator.json,
// manifests and imports refuse it, naming where.
TEST_P(LlmHostileReply, DuplicateKeysAreRefusedNamingThePath) {
  LlmProviderKind kind = GetParam();
  std::string body = WithUsage(kind, 10, 20);
  ASSERT_EQ(body.back(), '}');
  body.pop_back();
  body += R"(,"usage":{"prompt_tokens":1,"input_tokens":1}})";
  std::string err = ReplyParseError(kind, body);
  EXPECT_NE(err.find("usage: the key appears twice in the same object (line 1, column"), std::string::npos) << err;

  json doc = json::parse(testing::ReplyBody(kind, "hi"));
  std::string text = doc.dump();
  size_t model = text.find('{');
  text.insert(model + 1, R"("dup":1,"dup":2,)");
  EXPECT_NE(ReplyParseError(kind, text).find("dup: the key appears twice"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Providers, LlmHostileReply,
                         ::testing::Values(LlmProviderKind::openai, LlmProviderKind::anthropic));

}  // namespace
}  // namespace forgek
