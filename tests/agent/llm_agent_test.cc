// The llm agent against a loopback server, for both APIs: replies, errors, retries, repairs, budget.
#include <gtest/gtest.h>

#include <chrono>

#include "forgek/core/hash.h"
#include "forgek/agent/llm.h"
#include "llm_test_util.h"

namespace forgek {
namespace {

using testing::FakeLlmServer;
using testing::LastMessage;
using testing::ReceivedRequest;
using testing::ReplyWith;
using testing::ScriptedResponse;
using testing::VectorAddCandidate;

class LlmAgentTest : public ::testing::TestWithParam<LlmProviderKind> {
 protected:
  LlmProviderKind provider() const { return GetParam(); }
  bool anthropic() const { return provider() == LlmProviderKind::anthropic; }
  std::string Reply(const std::string& text, int64_t in = 1000, int64_t out = 500) const {
    return testing::ReplyBody(provider(), text, in, out);
  }
  std::string Endpoint() const { return anthropic() ? "/v1/messages" : "/chat/completions"; }

  LlmOptions Options() { return testing::TestOptions(provider(), server_, dir_); }
  std::unique_ptr<LlmAgent> Make(const LlmOptions& o) {
    std::string err;
    auto agent = LlmAgent::Create(o, &recorder_, &err);
    EXPECT_TRUE(agent) << err;
    return agent;
  }
  ProposalContext Context(int max_candidates = 1) {
    ProposalContext ctx;
    ctx.op = &op_;
    ctx.arch = "sm90";
    ctx.hardware = "NVIDIA H200, 132 SMs, 50 MiB L2";
    ctx.max_candidates = max_candidates;
    return ctx;
  }

  FakeLlmServer server_;
  TempDir dir_;
  OperatorSpec op_ = testing::VectorAddOperator();
  testing::VectorRecorder recorder_;
};

TEST_P(LlmAgentTest, SuccessGivesAProposalWithAccounting) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)), 1000, 500)});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].candidate.manifest.launches.at(0).kernel, "vadd");
  EXPECT_EQ(out[0].params.at("BLOCK"), 128);
  EXPECT_NE(out[0].rationale.find("one thread per element"), std::string::npos);
  EXPECT_EQ(out[0].candidate.source, VectorAddCandidate(128));

  auto got = server_.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, Endpoint());
  if (anthropic()) {
    EXPECT_EQ(got[0].Header("x-api-key"), testing::kTestKey);
    EXPECT_EQ(got[0].Header("anthropic-version"), "2023-06-01");
  } else {
    EXPECT_EQ(got[0].Header("Authorization"), std::string("Bearer ") + testing::kTestKey);
  }
  auto body = nlohmann::json::parse(got[0].body);
  EXPECT_EQ(body["model"], "test-model");
  std::string prompt = LastMessage(got[0].body);
  EXPECT_NE(prompt.find("x (input, f32): [N]"), std::string::npos);
  EXPECT_NE(prompt.find("large: N=4096; x [4096]"), std::string::npos);
  EXPECT_NE(prompt.find("NVIDIA H200"), std::string::npos);

  LlmSpend spent = agent->Spent();
  EXPECT_EQ(spent.requests, 1);
  EXPECT_EQ(spent.input_tokens, 1000);
  EXPECT_EQ(spent.output_tokens, 500);
  EXPECT_NEAR(spent.cost_usd, (1000 * 2.0 + 500 * 10.0) / 1e6, 1e-12);

  ASSERT_EQ(recorder_.exchanges.size(), 1u);
  const LlmExchange& x = recorder_.exchanges[0];
  EXPECT_EQ(x.provider, anthropic() ? "anthropic" : "openai");
  EXPECT_EQ(x.status, 200);
  EXPECT_EQ(x.purpose, "propose");
  EXPECT_EQ(x.attempts, 1);
  EXPECT_EQ(x.request_body, got[0].body);
  EXPECT_NEAR(x.cost_usd, spent.cost_usd, 1e-12);
  EXPECT_FALSE(x.usage_estimated);
  EXPECT_GE(x.finished_unix_ms, x.started_unix_ms);
}

TEST_P(LlmAgentTest, RateLimitWithRetryAfterThenSuccess) {
  server_.Push({429, {{"retry-after-ms", "50"}}, R"({"error":{"message":"Rate limit reached"}})"});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate()))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(server_.requests().size(), 2u);
  ASSERT_EQ(recorder_.exchanges.size(), 1u);
  EXPECT_EQ(recorder_.exchanges[0].attempts, 2);
}

TEST_P(LlmAgentTest, ServerErrorThenSuccess) {
  server_.Push({500, {}, R"({"error":{"message":"internal"}})"});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate()))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_P(LlmAgentTest, OverloadedThenSuccess) {
  server_.Push({529, {}, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate()))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_EQ(out.size(), 1u);
}

TEST_P(LlmAgentTest, PersistentServerErrorFailsAfterRetries) {
  server_.SetFallback([](const ReceivedRequest&, int) { return ScriptedResponse{503, {}, "unavailable"}; });
  LlmOptions o = Options();
  o.max_retries = 2;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("HTTP 503"), std::string::npos) << err;
  EXPECT_NE(err.find("after 3 attempt(s)"), std::string::npos) << err;
}

TEST_P(LlmAgentTest, AuthenticationFailureIsNotRetriedAndNamesTheVariable) {
  server_.SetFallback([](const ReceivedRequest&, int) {
    return ScriptedResponse{401, {}, R"({"error":{"message":"invalid x-api-key"}})"};
  });
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(2), &out, &err));
  EXPECT_NE(err.find("authentication failed"), std::string::npos) << err;
  EXPECT_NE(err.find(std::string("$") + testing::kTestKeyEnv), std::string::npos) << err;
  EXPECT_NE(err.find("invalid x-api-key"), std::string::npos) << err;
  EXPECT_EQ(err.find(testing::kTestKey), std::string::npos);
  EXPECT_EQ(server_.requests().size(), 2u);  // two proposals asked for, neither request retried
}

TEST_P(LlmAgentTest, ForbiddenIsFatal) {
  server_.Push({403, {}, R"({"error":{"message":"model not allowed"}})"});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("permission denied"), std::string::npos) << err;
  EXPECT_NE(err.find("model not allowed"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_P(LlmAgentTest, QuotaExhaustedIsFatal) {
  server_.Push({429, {}, R"({"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}})"});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("quota"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_P(LlmAgentTest, TimeoutFailsClearly) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate())), /*delay_s=*/3});
  LlmOptions o = Options();
  o.request_timeout_s = 0.2;
  o.max_retries = 0;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_NE(err.find("timed out"), std::string::npos) << err;
}

TEST_P(LlmAgentTest, MalformedJsonFailsClearly) {
  server_.Push({200, {}, "{\"choices\": [ this is not json"});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("malformed response"), std::string::npos) << err;
  EXPECT_NE(err.find("not JSON"), std::string::npos) << err;
}

TEST_P(LlmAgentTest, HugeReplyIsBounded) {
  server_.Push({200, {}, Reply(std::string(20u << 20, 'a'))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("exceeds the limit of 8388608 bytes"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 1u);  // not retried
}

TEST_P(LlmAgentTest, NoCodeBlockGetsAFormatRepairTurn) {
  server_.Push({200, {}, Reply("I would use vectorised loads, but here is no code.")});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate()))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_EQ(out.size(), 1u);
  auto got = server_.requests();
  ASSERT_EQ(got.size(), 2u);
  std::string repair = LastMessage(got[1].body);
  EXPECT_NE(repair.find("no code block"), std::string::npos) << repair;
  auto messages = nlohmann::json::parse(got[1].body)["messages"];
  ASSERT_GE(messages.size(), 3u);
  EXPECT_EQ(messages[messages.size() - 2]["role"], "assistant");
  ASSERT_EQ(recorder_.exchanges.size(), 2u);
  EXPECT_EQ(recorder_.exchanges[1].purpose, "format_repair");
}

TEST_P(LlmAgentTest, NoCodeBlockWithoutRepairTurnsFails) {
  server_.Push({200, {}, Reply("No code today.")});
  LlmOptions o = Options();
  o.max_repair_turns = 0;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("no code block"), std::string::npos) << err;
}

TEST_P(LlmAgentTest, TwoCodeBlocksTakesTheOneWithTheManifest) {
  std::string text = "A helper first:\n```cuda\n__device__ float add(float a, float b) { return a + b; }\n```\n" +
                     ReplyWith(VectorAddCandidate(512));
  server_.Push({200, {}, Reply(text)});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].params.at("BLOCK"), 512);
}

TEST_P(LlmAgentTest, TwoManifestsGetARepairTurn) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)) + ReplyWith(VectorAddCandidate(256)))});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(256)))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  auto got = server_.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(LastMessage(got[1].body).find("2 code blocks"), std::string::npos);
}

TEST_P(LlmAgentTest, BrokenManifestIsFedBack) {
  std::string broken = VectorAddCandidate();
  broken.replace(broken.find("\"launches\""), 10, "\"lunches\"");
  server_.Push({200, {}, Reply(ReplyWith(broken))});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate()))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  auto got = server_.requests();
  ASSERT_EQ(got.size(), 2u);
  std::string repair = LastMessage(got[1].body);
  EXPECT_NE(repair.find("manifest has problems"), std::string::npos) << repair;
  EXPECT_NE(repair.find("candidate.cu"), std::string::npos) << repair;
}

TEST_P(LlmAgentTest, BrokenManifestEveryTimeFailsAfterTheRepairBound) {
  std::string broken = VectorAddCandidate();
  broken.replace(broken.find("\"x\", \"y\""), 8, "\"q\", \"y\"");  // an unknown tensor
  server_.SetFallback([&](const ReceivedRequest&, int) { return ScriptedResponse{200, {}, Reply(ReplyWith(broken))}; });
  LlmOptions o = Options();
  o.max_repair_turns = 2;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("no usable candidate after 2 repair turn(s)"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_P(LlmAgentTest, AModelThatOnlyRepeatsEarlierKernelsHasNothingNewToOffer) {
  // Every reply is the kernel already tried, through both repair turns: not a failure (the run
  // ends as exhausted, exit 0), unlike a reply that never parses (above).
  server_.SetFallback(
      [&](const ReceivedRequest&, int) { return ScriptedResponse{200, {}, Reply(ReplyWith(VectorAddCandidate(128)))}; });
  LlmOptions o = Options();
  o.max_repair_turns = 2;
  auto agent = Make(o);
  ProposalContext ctx = Context();
  ParamAssignment params{{"BLOCK", 128}};
  ctx.history.push_back({1, CandidateHash(VectorAddCandidate(128), params), "", params, Outcome::slower, "", 0.9});
  std::vector<Proposal> out;
  std::string err;
  EXPECT_TRUE(agent->Propose(ctx, &out, &err)) << err;
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(server_.requests().size(), 3u) << "the proposal and both repair turns";
}

TEST_P(LlmAgentTest, FailedProposalContinuesItsConversationWithFeedback) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)))});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(256)))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);

  ProposalContext ctx = Context();
  AttemptSummary attempt;
  attempt.iteration = 1;
  attempt.candidate_hash = CandidateHash(out[0].candidate.source, out[0].params);
  attempt.outcome = Outcome::compile_error;
  attempt.feedback = "candidate.cu(9): error: identifier \"BLOCKK\" is undefined";
  ctx.history.push_back(attempt);
  ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].params.at("BLOCK"), 256);

  auto got = server_.requests();
  ASSERT_EQ(got.size(), 2u);
  auto messages = nlohmann::json::parse(got[1].body)["messages"];
  ASSERT_EQ(messages.size(), anthropic() ? 3u : 4u);  // (system,) propose, reply, repair
  std::string repair = messages.back()["content"];
  EXPECT_NE(repair.find("compile_error"), std::string::npos) << repair;
  EXPECT_NE(repair.find("identifier \"BLOCKK\" is undefined"), std::string::npos) << repair;
  EXPECT_EQ(recorder_.exchanges.back().purpose, "repair");

  // The same attempt seen again is not repaired twice: a fresh conversation instead.
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(64)))});
  ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
  EXPECT_EQ(recorder_.exchanges.back().purpose, "propose");
}

TEST_P(LlmAgentTest, SlowerProposalHearsItsTimesInTheSameConversation) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)))});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(256)))});
  auto agent = Make(Options());
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  ProposalContext ctx = Context();
  AttemptSummary slower{1, CandidateHash(out[0].candidate.source, out[0].params), "", {}, Outcome::slower,
                        "geomean 0.800x (noise 0.7%) over 2 configs", 0.8};
  slower.configs = {{"small", 5.0, 4.0, 30.0, "slower"}, {"large", 10.0, 8.0, 35.0, "slower"}};
  slower.source = out[0].candidate.source;
  ctx.history.push_back(slower);
  ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].params.at("BLOCK"), 256);
  EXPECT_EQ(out[0].parent, slower.candidate_hash) << "the next proposal descends from the one fed back";
  EXPECT_EQ(recorder_.exchanges.back().purpose, "feedback");
  auto messages = nlohmann::json::parse(server_.requests()[1].body)["messages"];
  ASSERT_EQ(messages.size(), anthropic() ? 3u : 4u);  // (system,) propose, reply, feedback
  std::string feedback = messages.back()["content"];
  EXPECT_NE(feedback.find("| large | 10.00 | 8.00 | 0.800x | 35.0 | slower |"), std::string::npos) << feedback;
}

TEST_P(LlmAgentTest, LongConversationsDropTheirOldestTurns) {
  LlmOptions o = Options();
  o.conversation_tokens = 1500;  // the propose prompt alone is near this
  o.max_feedback_turns = 8;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  ProposalContext ctx = Context();
  for (int round = 0; round < 4; ++round) {
    server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(32 << round)))});
    ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
    ASSERT_EQ(out.size(), 1u);
    AttemptSummary a{round, CandidateHash(out[0].candidate.source, out[0].params), "", {}, Outcome::slower,
                     std::string(2000, 's'), 0.9};
    ctx.history.push_back(a);
  }
  auto messages = nlohmann::json::parse(server_.requests().back().body)["messages"];
  EXPECT_LE(messages.size(), anthropic() ? 3u : 4u) << "older turns were dropped";
  std::string last = messages.back()["content"];
  EXPECT_NE(last.find("were dropped to stay within its token budget"), std::string::npos) << last;
  EXPECT_NE(last.find("attempt 1: slower 0.900x"), std::string::npos) << last;
}

TEST_P(LlmAgentTest, DuplicateOfAnEarlierAttemptIsSentBack) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)))});
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(64)))});
  auto agent = Make(Options());
  ProposalContext ctx = Context();
  ParamAssignment params{{"BLOCK", 128}};
  ctx.history.push_back({1, CandidateHash(VectorAddCandidate(128), params), "", params, Outcome::slower, "", 0.9});
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].params.at("BLOCK"), 64);
  EXPECT_NE(LastMessage(server_.requests()[1].body).find("identical to one already tried"), std::string::npos);
}

TEST_P(LlmAgentTest, SeveralRequestsAreInFlightAtOnce) {
  server_.SetFallback([this](const ReceivedRequest&, int index) {
    return ScriptedResponse{200, {}, Reply(ReplyWith(VectorAddCandidate(32 * (index + 1)))), /*delay_s=*/0.4};
  });
  LlmOptions o = Options();
  o.max_in_flight = 4;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent->Propose(Context(4), &out, &err)) << err;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(out.size(), 4u);
  EXPECT_LT(elapsed, 1.2);  // one after another would take 1.6 s
  // Each parallel proposal is told which variant it is.
  auto got = server_.requests();
  ASSERT_EQ(got.size(), 4u);
  int told = 0;
  for (const auto& r : got) told += LastMessage(r.body).find("of 4 requested") != std::string::npos;
  EXPECT_EQ(told, 4);
  EXPECT_EQ(recorder_.exchanges.size(), 4u);
}

TEST_P(LlmAgentTest, CostCapRefusesTheNextRequest) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)), 100000, 10000)});  // $0.30
  LlmOptions o = Options();
  o.max_cost_usd = 0.25;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("LLM budget spent"), std::string::npos) << err;
  EXPECT_NE(err.find("--max-cost"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(recorder_.exchanges.size(), 1u);
}

TEST_P(LlmAgentTest, TokenCapRefusesTheNextRequest) {
  server_.Push({200, {}, Reply(ReplyWith(VectorAddCandidate(128)), 700, 400)});
  LlmOptions o = Options();
  o.max_tokens = 1000;
  auto agent = Make(o);
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent->Propose(Context(), &out, &err)) << err;
  EXPECT_FALSE(agent->Propose(Context(), &out, &err));
  EXPECT_NE(err.find("1100 of the 1000 token cap (--max-tokens)"), std::string::npos) << err;
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_P(LlmAgentTest, MissingKeyFailsAtCreation) {
  LlmOptions o = Options();
  o.key_env = "FORGEK_TEST_LLM_KEY_UNSET";
  unsetenv("FORGEK_TEST_LLM_KEY_UNSET");
  std::string err;
  EXPECT_FALSE(LlmAgent::Create(o, nullptr, &err));
  EXPECT_NE(err.find("FORGEK_TEST_LLM_KEY_UNSET is not set"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(Providers, LlmAgentTest,
                         ::testing::Values(LlmProviderKind::openai, LlmProviderKind::anthropic),
                         [](const auto& param_info) { return std::string(LlmProviderName(param_info.param)); });

}  // namespace
}  // namespace forgek
