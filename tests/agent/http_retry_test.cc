// Retry policy: which failures are retried, Retry-After headers, backoff, and retries on loopback.
#include <gtest/gtest.h>

#include <chrono>

#include "forgek/agent/http.h"
#include "llm_test_server.h"

namespace forgek {
namespace {

using testing::FakeLlmServer;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

RetryPolicy FastPolicy(int retries = 3) {
  RetryPolicy p;
  p.max_retries = retries;
  p.base_delay_s = 0.01;
  p.max_delay_s = 0.05;
  return p;
}

TEST(RetryAfter, ReadsMillisecondsSecondsAndDates) {
  EXPECT_DOUBLE_EQ(*RetryAfterSeconds({{"retry-after-ms", "250"}}, 0), 0.25);
  EXPECT_DOUBLE_EQ(*RetryAfterSeconds({{"retry-after", "3"}}, 0), 3.0);
  EXPECT_DOUBLE_EQ(*RetryAfterSeconds({{"retry-after", "1.5"}}, 0), 1.5);
  // retry-after-ms wins over retry-after.
  EXPECT_DOUBLE_EQ(*RetryAfterSeconds({{"retry-after-ms", "100"}, {"retry-after", "9"}}, 0), 0.1);
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777 in Unix time.
  auto date = RetryAfterSeconds({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, 784111770);
  ASSERT_TRUE(date.has_value());
  EXPECT_DOUBLE_EQ(*date, 7.0);
  EXPECT_FALSE(RetryAfterSeconds({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, 784111800).has_value());
  EXPECT_FALSE(RetryAfterSeconds({{"retry-after", "soon"}}, 0).has_value());
  EXPECT_FALSE(RetryAfterSeconds({{"retry-after", "-2"}}, 0).has_value());
  EXPECT_FALSE(RetryAfterSeconds({}, 0).has_value());
}

TEST(RetryPolicy, RetryableStatuses) {
  auto status = [](long s, std::string body = "", std::map<std::string, std::string> headers = {}) {
    HttpResponse r;
    r.status = s;
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
  };
  for (long s : {408L, 409L, 429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(IsRetryableStatus(status(s))) << s;
  for (long s : {200L, 400L, 401L, 403L, 404L, 422L}) EXPECT_FALSE(IsRetryableStatus(status(s))) << s;
  auto quota = status(429, R"({"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}})");
  EXPECT_TRUE(IsQuotaExhausted(quota));
  EXPECT_FALSE(IsRetryableStatus(quota));
  EXPECT_TRUE(IsQuotaExhausted(status(429, R"({"error":{"message":"Your credit balance is too low"}})")));
  EXPECT_FALSE(IsQuotaExhausted(status(429, R"({"error":{"message":"Rate limit reached"}})")));
  EXPECT_FALSE(IsRetryableStatus(status(500, "", {{"x-should-retry", "false"}})));
  EXPECT_TRUE(IsRetryableStatus(status(400, "", {{"x-should-retry", "true"}})));
}

TEST(RetryPolicy, BackoffDoublesWithCapAndJitter) {
  RetryPolicy p;
  p.base_delay_s = 0.5;
  p.max_delay_s = 4;
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 1, 0), 1.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 2, 0), 2.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 5, 0), 4.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 1, 1.0), 0.75);  // at most 25% jitter
}

TEST(HttpRetries, ServerErrorThenSuccess) {
  FakeLlmServer server;
  server.Push({500, {}, "oops"});
  server.Push({200, {}, "fine"});
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  ASSERT_TRUE(out.responded) << out.error;
  EXPECT_EQ(out.response.status, 200);
  EXPECT_EQ(out.response.body, "fine");
  EXPECT_EQ(out.attempts, 2);
}

TEST(HttpRetries, OverloadedThenSuccess) {
  FakeLlmServer server;
  server.Push({529, {}, R"({"type":"error","error":{"type":"overloaded_error"}})"});
  server.Push({200, {}, "fine"});
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  EXPECT_EQ(out.response.status, 200);
  EXPECT_EQ(out.attempts, 2);
}

TEST(HttpRetries, HonoursRetryAfterMs) {
  FakeLlmServer server;
  server.Push({429, {{"retry-after-ms", "300"}}, "slow down"});
  server.Push({200, {}, "fine"});
  auto start = std::chrono::steady_clock::now();
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  EXPECT_GE(SecondsSince(start), 0.29);  // the base delay alone is 0.01 s
  EXPECT_EQ(out.response.status, 200);
  EXPECT_EQ(out.attempts, 2);
}

TEST(HttpRetries, HonoursRetryAfterSeconds) {
  FakeLlmServer server;
  server.Push({503, {{"Retry-After", "1"}}, "busy"});
  server.Push({200, {}, "fine"});
  auto start = std::chrono::steady_clock::now();
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  EXPECT_GE(SecondsSince(start), 0.95);
  EXPECT_EQ(out.response.status, 200);
}

TEST(HttpRetries, RetryAfterBeyondTheLimitFallsBackToBackoff) {
  FakeLlmServer server;
  server.Push({429, {{"retry-after", "3600"}}, "later"});
  server.Push({200, {}, "fine"});
  auto start = std::chrono::steady_clock::now();
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  EXPECT_LT(SecondsSince(start), 1.0);
  EXPECT_EQ(out.response.status, 200);
}

TEST(HttpRetries, ClientErrorsAreNotRetried) {
  for (int status : {400, 401, 403}) {
    FakeLlmServer server;
    server.Push({status, {}, "no"});
    server.Push({200, {}, "fine"});
    auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
    EXPECT_EQ(out.response.status, status);
    EXPECT_EQ(out.attempts, 1);
    EXPECT_EQ(server.requests().size(), 1u);
  }
}

TEST(HttpRetries, QuotaExhaustedIsNotRetried) {
  FakeLlmServer server;
  server.Push({429, {}, R"({"error":{"type":"insufficient_quota","message":"check your plan and billing"}})"});
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy());
  EXPECT_EQ(out.response.status, 429);
  EXPECT_EQ(out.attempts, 1);
}

TEST(HttpRetries, GivesUpAfterMaxRetries) {
  FakeLlmServer server;
  server.SetFallback([](const testing::ReceivedRequest&, int) { return testing::ScriptedResponse{502, {}, "bad"}; });
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, FastPolicy(2));
  EXPECT_EQ(out.response.status, 502);
  EXPECT_EQ(out.attempts, 3);
}

TEST(HttpRetries, ConnectionErrorsAreRetried) {
  int port;
  {
    FakeLlmServer closed;
    port = closed.port();
  }
  auto out = HttpPostWithRetries({"http://127.0.0.1:" + std::to_string(port) + "/x", {}, "{}"}, HttpLimits{},
                                 FastPolicy(2));
  EXPECT_FALSE(out.responded);
  EXPECT_EQ(out.failure, HttpFailure::connect);
  EXPECT_EQ(out.attempts, 3);
}

TEST(HttpRetries, OversizedBodyIsNotRetried) {
  FakeLlmServer server;
  server.SetFallback(
      [](const testing::ReceivedRequest&, int) { return testing::ScriptedResponse{200, {}, std::string(2048, 'z')}; });
  HttpLimits limits;
  limits.max_response_bytes = 1024;
  auto out = HttpPostWithRetries({server.base_url() + "/x", {}, "{}"}, limits, FastPolicy(3));
  EXPECT_EQ(out.failure, HttpFailure::too_large);
  EXPECT_EQ(out.attempts, 1);
}

}  // namespace
}  // namespace forgek
