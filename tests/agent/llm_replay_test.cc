// Replay: a recorded run of the llm agent replays to the same proposals without a server.
#include <gtest/gtest.h>

#include "forgek/core/hash.h"
#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using testing::ReplyWith;
using testing::VectorAddCandidate;

struct Step {
  std::vector<Proposal> proposals;
  bool ok = false;
  std::string err;
};

// Three Propose calls: the first needs a format repair, the second repairs a failed proposal
// with feedback from the history, the third asks for two proposals.
std::vector<Step> Drive(Agent& agent, const OperatorSpec& op) {
  std::vector<Step> steps;
  ProposalContext ctx;
  ctx.op = &op;
  ctx.arch = "sm90";
  ctx.max_candidates = 1;
  for (int call = 0; call < 3; ++call) {
    if (call == 2) ctx.max_candidates = 2;
    Step s;
    s.ok = agent.Propose(ctx, &s.proposals, &s.err);
    for (const auto& p : s.proposals) {
      AttemptSummary a;
      a.iteration = static_cast<int>(ctx.history.size()) + 1;
      a.candidate_hash = CandidateHash(p.candidate.source, p.params);
      a.outcome = call == 0 ? Outcome::wrong : Outcome::slower;
      a.feedback = call == 0 ? "config large: max abs error 2.0 at index 4095" : "0.9x";
      ctx.history.push_back(a);
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

TEST(ReplayAgent, ReproducesARecordedRun) {
  testing::FakeLlmServer server;
  TempDir dir;
  OperatorSpec op = testing::VectorAddOperator();
  auto provider = LlmProviderKind::anthropic;
  auto reply = [&](const std::string& text) { return testing::ReplyBody(provider, text); };
  server.Push({200, {}, reply("Sorry, no code.")});
  server.Push({200, {}, reply(ReplyWith(VectorAddCandidate(128)))});
  server.Push({500, {}, "transient"});
  server.Push({200, {}, reply(ReplyWith(VectorAddCandidate(256)))});
  server.Push({200, {}, reply(ReplyWith(VectorAddCandidate(64)))});
  server.Push({200, {}, reply(ReplyWith(VectorAddCandidate(32)))});

  testing::VectorRecorder recorded;
  LlmOptions opts = testing::TestOptions(provider, server, dir);
  opts.max_in_flight = 1;  // the live server answers in queue order: keep it aligned with the slots
  std::string err;
  auto live = LlmAgent::Create(opts, &recorded, &err);
  ASSERT_TRUE(live) << err;
  std::vector<Step> original = Drive(*live, op);
  ASSERT_EQ(recorded.exchanges.size(), 5u);
  EXPECT_EQ(recorded.exchanges[1].purpose, "format_repair");
  EXPECT_EQ(recorded.exchanges[2].purpose, "repair");
  EXPECT_EQ(recorded.exchanges[2].attempts, 2);
  server.Stop();

  // Through JSON, as the store would keep them.
  std::vector<LlmExchange> loaded;
  for (const auto& x : recorded.exchanges) {
    LlmExchange back;
    ASSERT_TRUE(LlmExchangeFromJson(LlmExchangeToJson(x), &back, &err)) << err;
    loaded.push_back(back);
  }
  LlmOptions replay_opts;
  replay_opts.prompts_dir = opts.prompts_dir;
  replay_opts.prices_path = opts.prices_path;
  testing::VectorRecorder rerecorded;
  auto replay = ReplayAgent::Create(replay_opts, loaded, &rerecorded, &err);
  ASSERT_TRUE(replay) << err;
  std::vector<Step> again = Drive(*replay, op);

  ASSERT_EQ(again.size(), original.size());
  for (size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(again[i].ok, original[i].ok) << again[i].err;
    ASSERT_EQ(again[i].proposals.size(), original[i].proposals.size()) << "call " << i;
    for (size_t j = 0; j < original[i].proposals.size(); ++j) {
      EXPECT_EQ(again[i].proposals[j].candidate.source, original[i].proposals[j].candidate.source);
      EXPECT_EQ(again[i].proposals[j].params, original[i].proposals[j].params);
      EXPECT_EQ(again[i].proposals[j].rationale, original[i].proposals[j].rationale);
    }
  }
  EXPECT_EQ(original[1].proposals.at(0).params.at("BLOCK"), 256);
  EXPECT_EQ(replay->Remaining(), 0u);
  // The replayed requests are the recorded ones, byte for byte.
  ASSERT_EQ(rerecorded.exchanges.size(), recorded.exchanges.size());
  for (size_t i = 0; i < recorded.exchanges.size(); ++i) {
    EXPECT_EQ(rerecorded.exchanges[i].request_body, recorded.exchanges[i].request_body) << i;
    EXPECT_EQ(rerecorded.exchanges[i].cost_usd, recorded.exchanges[i].cost_usd) << i;
  }

  // Past the end of the recording, Propose fails clearly.
  ProposalContext ctx;
  ctx.op = &op;
  std::vector<Proposal> out;
  EXPECT_FALSE(replay->Propose(ctx, &out, &err));
  EXPECT_NE(err.find("no more exchanges"), std::string::npos) << err;
}

TEST(ReplayAgent, ReplaysARecordedFailure) {
  LlmExchange x;
  x.provider = "openai";
  x.model = "test-model";
  x.url = "http://127.0.0.1:1/v1/chat/completions";
  x.status = 401;
  x.response_body = R"({"error":{"message":"bad key"}})";
  LlmOptions opts;
  opts.prompts_dir = SourceDir() + "/knowledge/prompts";
  std::string err;
  auto replay = ReplayAgent::Create(opts, {x}, nullptr, &err);
  ASSERT_TRUE(replay) << err;
  OperatorSpec op = testing::VectorAddOperator();
  ProposalContext ctx;
  ctx.op = &op;
  ctx.max_candidates = 1;
  std::vector<Proposal> out;
  EXPECT_FALSE(replay->Propose(ctx, &out, &err));
  EXPECT_NE(err.find("authentication failed"), std::string::npos) << err;
  EXPECT_NE(err.find("$OPENAI_API_KEY"), std::string::npos) << err;
}

TEST(LlmExchangeJson, RoundTripsEveryField) {
  LlmExchange x;
  x.provider = "anthropic";
  x.model = "m";
  x.url = "u";
  x.purpose = "repair";
  x.request_headers = {{"x-api-key", "[redacted]"}, {"anthropic-version", "2023-06-01"}};
  x.request_body = "{\"a\":1}";
  x.status = 200;
  x.response_body = "body";
  x.error = "";
  x.attempts = 3;
  x.input_tokens = 11;
  x.output_tokens = 22;
  x.usage_estimated = true;
  x.cost_usd = 0.5;
  x.latency_s = 1.25;
  x.started_unix_ms = 1000;
  x.finished_unix_ms = 2250;
  LlmExchange back;
  std::string err;
  ASSERT_TRUE(LlmExchangeFromJson(LlmExchangeToJson(x), &back, &err)) << err;
  EXPECT_EQ(LlmExchangeToJson(back), LlmExchangeToJson(x));
  EXPECT_EQ(back.request_headers, x.request_headers);
  EXPECT_EQ(back.attempts, 3);
  EXPECT_FALSE(LlmExchangeFromJson("{\"model\": 1}", &back, &err));
  EXPECT_NE(err.find("exchange:"), std::string::npos);
}

}  // namespace
}  // namespace forgek
