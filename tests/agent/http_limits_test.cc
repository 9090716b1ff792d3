// HTTP limits against a loopback server: a stalled (dripping) response, the run's deadline, an abort
// from another thread, and retries that stop at the deadline. Each test is bounded in time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "forgek/agent/http.h"
#include "llm_test_server.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;
using testing::FakeLlmServer;
using testing::ScriptedResponse;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

HttpRequest Post(const FakeLlmServer& server) { return {server.base_url() + "/v1/chat", {}, "{}"}; }

TEST(HttpLimits, DrippingResponseIsCutByTheLowSpeedLimit) {
  // One byte every 0.2 s (5 B/s) of a long body: the issue's 1-byte-per-second server, faster.
  FakeLlmServer server;
  ScriptedResponse drip{200, {}, std::string(10000, ' ')};
  drip.drip_s = 0.2;
  server.Push(drip);
  HttpLimits limits;
  limits.total_timeout_s = 30;
  limits.low_speed_bytes_per_s = 100;
  limits.low_speed_time_s = 1;
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  auto start = Clock::now();
  EXPECT_FALSE(HttpPost(Post(server), limits, &resp, &failure, &err));
  double took = SecondsSince(start);
  EXPECT_EQ(failure, HttpFailure::timeout);
  EXPECT_NE(err.find("stalled"), std::string::npos) << err;
  EXPECT_NE(err.find("100 bytes/s over 1 s"), std::string::npos) << err;
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 5.0);
}

TEST(HttpLimits, WaitBeforeTheFirstByteIsNotAStall) {
  // A model thinking before it answers sends nothing; only the total limit bounds that wait.
  FakeLlmServer server;
  server.Push({200, {}, R"({"ok":true})", /*delay_s=*/1.5});
  HttpLimits limits;
  limits.low_speed_bytes_per_s = 1000;
  limits.low_speed_time_s = 0.5;
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  ASSERT_TRUE(HttpPost(Post(server), limits, &resp, &failure, &err)) << err;
  EXPECT_EQ(resp.body, R"({"ok":true})");
}

TEST(HttpLimits, DeadlineCutsARequestInFlight) {
  FakeLlmServer server;
  server.Push({200, {}, "{}", /*delay_s=*/20});
  HttpLimits limits;
  limits.deadline = Clock::now() + std::chrono::milliseconds(700);
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  auto start = Clock::now();
  EXPECT_FALSE(HttpPost(Post(server), limits, &resp, &failure, &err));
  EXPECT_EQ(failure, HttpFailure::deadline);
  EXPECT_NE(err.find("time budget"), std::string::npos) << err;
  EXPECT_LT(SecondsSince(start), 3.0);
}

TEST(HttpLimits, PassedDeadlineSendsNothing) {
  FakeLlmServer server;
  HttpLimits limits;
  limits.deadline = Clock::now() - std::chrono::seconds(1);
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  EXPECT_FALSE(HttpPost(Post(server), limits, &resp, &failure, &err));
  EXPECT_EQ(failure, HttpFailure::deadline);
  EXPECT_TRUE(server.requests().empty());
}

TEST(HttpLimits, AbortFromAnotherThreadEndsTheRequestPromptly) {
  FakeLlmServer server;
  server.Push({200, {}, "{}", /*delay_s=*/20});
  std::atomic<bool> stop{false};
  HttpLimits limits;
  limits.abort = [&stop] { return stop.load(); };
  std::thread interrupter([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;  // what the first Ctrl-C does
  });
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  auto start = Clock::now();
  EXPECT_FALSE(HttpPost(Post(server), limits, &resp, &failure, &err));
  double took = SecondsSince(start);
  interrupter.join();
  EXPECT_EQ(failure, HttpFailure::aborted);
  EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
  EXPECT_LT(took, 2.5);
}

TEST(HttpLimits, RetriesStopWhenTheDeadlineWouldPass) {
  FakeLlmServer server;
  server.SetFallback([](const testing::ReceivedRequest&, int) { return ScriptedResponse{503, {}, "{}"}; });
  HttpLimits limits;
  limits.deadline = Clock::now() + std::chrono::milliseconds(1500);
  RetryPolicy policy;
  policy.max_retries = 10;
  policy.base_delay_s = 1;  // the first backoff (0.75..1 s) fits, the second (1.5..2 s) does not
  policy.max_delay_s = 4;
  auto start = Clock::now();
  HttpOutcome o = HttpPostWithRetries(Post(server), limits, policy);
  EXPECT_TRUE(o.responded);
  EXPECT_EQ(o.response.status, 503);
  EXPECT_EQ(o.attempts, 2);
  EXPECT_LT(SecondsSince(start), 1.6);
}

TEST(HttpLimits, AbortEndsABackoffWait) {
  FakeLlmServer server;
  server.SetFallback([](const testing::ReceivedRequest&, int) { return ScriptedResponse{503, {}, "{}"}; });
  std::atomic<bool> stop{false};
  HttpLimits limits;
  limits.abort = [&stop] { return stop.load(); };
  RetryPolicy policy;
  policy.base_delay_s = 30;
  policy.max_delay_s = 30;
  std::thread interrupter([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto start = Clock::now();
  HttpOutcome o = HttpPostWithRetries(Post(server), limits, policy);
  interrupter.join();
  EXPECT_FALSE(o.responded);
  EXPECT_EQ(o.failure, HttpFailure::aborted);
  EXPECT_EQ(o.attempts, 1);
  EXPECT_LT(SecondsSince(start), 2.0);
}

}  // namespace
}  // namespace forgek
