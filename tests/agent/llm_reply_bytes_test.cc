// A provider's reply in another encoding than UTF-8 (a Latin-1 error page from a proxy, a stray byte
// in a reply) is made valid UTF-8 before it is parsed, reported or recorded (issue 29, item 6): the
// refusal reaches the user and the record stays readable by every JSON writer and reader.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/core/utf8_text.h"
#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using nlohmann::json;

// "Accès refusé par le proxy", as a French proxy's Latin-1 page sends it.
const std::string kLatin1Page = "<html><body>Acc\xE8s refus\xE9 par le proxy</body></html>";
const std::string kRepaired = "Acc\xEF\xBF\xBDs refus\xEF\xBF\xBD par le proxy";  // each bad byte as U+FFFD

ProposalContext ContextFor(const OperatorSpec& op) {
  ProposalContext ctx;
  ctx.op = &op;
  ctx.arch = "sm90";
  ctx.max_candidates = 1;
  return ctx;
}

class LlmReplyBytes : public ::testing::TestWithParam<LlmProviderKind> {};

TEST_P(LlmReplyBytes, ALatin1ErrorPageIsReportedAndRecordedAsValidUtf8) {
  testing::FakeLlmServer server;
  TempDir dir;
  server.SetFallback([](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{403, {{"Content-Type", "text/html; charset=iso-8859-1"}}, kLatin1Page};
  });
  testing::VectorRecorder recorder;
  std::string err;
  auto agent = LlmAgent::Create(testing::TestOptions(GetParam(), server, dir), &recorder, &err);
  ASSERT_TRUE(agent) << err;
  OperatorSpec op = testing::VectorAddOperator();
  std::vector<Proposal> out;
  EXPECT_FALSE(agent->Propose(ContextFor(op), &out, &err));
  EXPECT_NE(err.find("permission denied (HTTP 403"), std::string::npos) << err;
  EXPECT_NE(err.find(kRepaired), std::string::npos) << err;
  EXPECT_TRUE(IsValidUtf8(err)) << err;
  // The run's summary and the store's rows are dumped as strict JSON: this threw "invalid UTF-8 byte".
  EXPECT_NO_THROW(json({{"error", err}}).dump());
  ASSERT_EQ(recorder.exchanges.size(), 1u);
  const LlmExchange& x = recorder.exchanges.front();
  EXPECT_NE(x.response_body.find(kRepaired), std::string::npos) << x.response_body;
  EXPECT_TRUE(IsValidUtf8(x.response_body));
  EXPECT_TRUE(IsValidUtf8(x.error)) << x.error;
  EXPECT_NO_THROW(json({{"response", x.response_body}, {"error", x.error}}).dump());
  // And it reads back for replay as it was recorded.
  LlmExchange back;
  ASSERT_TRUE(LlmExchangeFromJson(LlmExchangeToJson(x), &back, &err)) << err;
  EXPECT_EQ(back.response_body, x.response_body);
  EXPECT_EQ(back.error, x.error);
}

// A stray Latin-1 byte inside a 2xx reply's text made the whole reply "not JSON"; now the reply is
// read, the byte shown as U+FFFD.
TEST_P(LlmReplyBytes, AStrayByteInAReplyIsReplacedNotFatal) {
  testing::FakeLlmServer server;
  TempDir dir;
  std::string code = testing::VectorAddCandidate();
  code.insert(code.find("extern"), "// CAFE_MARK\n");
  std::string body = testing::ReplyBody(GetParam(), testing::ReplyWith(code));
  body.replace(body.find("CAFE_MARK"), 9, "caf\xE9");
  server.SetFallback([body](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{200, {}, body};
  });
  testing::VectorRecorder recorder;
  std::string err;
  auto agent = LlmAgent::Create(testing::TestOptions(GetParam(), server, dir), &recorder, &err);
  ASSERT_TRUE(agent) << err;
  OperatorSpec op = testing::VectorAddOperator();
  std::vector<Proposal> out;
  ASSERT_TRUE(agent->Propose(ContextFor(op), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].candidate.source.find("// caf\xEF\xBF\xBD\n"), std::string::npos) << out[0].candidate.source;
  ASSERT_FALSE(recorder.exchanges.empty());
  EXPECT_TRUE(IsValidUtf8(recorder.exchanges.front().response_body));
}

INSTANTIATE_TEST_SUITE_P(Providers, LlmReplyBytes,
                         ::testing::Values(LlmProviderKind::openai, LlmProviderKind::anthropic));

}  // namespace
}  // namespace forgek
