// HttpPost against a loopback server: success, refused connection, timeout, oversized bodies.
#include <gtest/gtest.h>

#include <chrono>

#include "forgek/agent/http.h"
#include "llm_test_server.h"

namespace forgek {
namespace {

using testing::FakeLlmServer;
using testing::ScriptedResponse;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(HttpClient, PostsBodyAndHeadersAndReadsResponse) {
  FakeLlmServer server;
  server.Push({201, {{"X-Request-Id", "abc"}}, R"({"ok":true})"});
  HttpRequest req{server.base_url() + "/v1/thing", {{"Content-Type", "application/json"}, {"X-Custom", "42"}},
                  R"({"q":1})"};
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  ASSERT_TRUE(HttpPost(req, HttpLimits{}, &resp, &failure, &err)) << err;
  EXPECT_EQ(resp.status, 201);
  EXPECT_EQ(resp.body, R"({"ok":true})");
  EXPECT_EQ(resp.headers["x-request-id"], "abc");  // names lower-cased
  auto got = server.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/v1/thing");
  EXPECT_EQ(got[0].body, R"({"q":1})");
  EXPECT_EQ(got[0].Header("X-Custom"), "42");
  EXPECT_EQ(got[0].Header("Expect"), "");
}

TEST(HttpClient, RefusedConnectionIsAConnectFailure) {
  int port;
  {
    FakeLlmServer closed;
    port = closed.port();
  }
  HttpRequest req{"http://127.0.0.1:" + std::to_string(port) + "/x", {}, "{}"};
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  EXPECT_FALSE(HttpPost(req, HttpLimits{}, &resp, &failure, &err));
  EXPECT_EQ(failure, HttpFailure::connect);
  EXPECT_NE(err.find("127.0.0.1"), std::string::npos) << err;
}

TEST(HttpClient, SlowServerTimesOut) {
  FakeLlmServer server;
  server.Push({200, {}, "{}", /*delay_s=*/3});
  HttpLimits limits;
  limits.total_timeout_s = 0.2;
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(HttpPost({server.base_url() + "/x", {}, "{}"}, limits, &resp, &failure, &err));
  EXPECT_LT(SecondsSince(start), 2.0);
  EXPECT_EQ(failure, HttpFailure::timeout);
  EXPECT_NE(err.find("timed out"), std::string::npos) << err;
}

TEST(HttpClient, HugeBodyWithLengthIsRefused) {
  FakeLlmServer server;
  server.Push({200, {}, std::string(20u << 20, 'x')});
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  EXPECT_FALSE(HttpPost({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, &resp, &failure, &err));
  EXPECT_EQ(failure, HttpFailure::too_large);
  EXPECT_NE(err.find("exceeds the limit of 8388608 bytes"), std::string::npos) << err;
  EXPECT_TRUE(resp.body.empty());
}

TEST(HttpClient, HugeChunkedBodyIsCutAtTheLimit) {
  FakeLlmServer server;
  ScriptedResponse huge{200, {}, std::string(3u << 20, 'x')};
  huge.chunked = true;
  server.Push(huge);
  HttpLimits limits;
  limits.max_response_bytes = 1u << 20;
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  EXPECT_FALSE(HttpPost({server.base_url() + "/x", {}, "{}"}, limits, &resp, &failure, &err));
  EXPECT_EQ(failure, HttpFailure::too_large);
  EXPECT_NE(err.find("exceeds the limit of 1048576 bytes"), std::string::npos) << err;
}

TEST(HttpClient, ChunkedBodyUnderTheLimitArrivesWhole) {
  FakeLlmServer server;
  ScriptedResponse r{200, {}, std::string(300000, 'y')};
  r.chunked = true;
  server.Push(r);
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  ASSERT_TRUE(HttpPost({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, &resp, &failure, &err)) << err;
  EXPECT_EQ(resp.body.size(), 300000u);
}

// A redirect is not followed (the key would go wherever it points), and the response says where it
// pointed, with query values masked: the caller's "request refused (HTTP 307 ...): " quotes it.
TEST(HttpClient, ARedirectIsNotFollowedAndSaysWhereItPointed) {
  FakeLlmServer server;
  const std::string moved = server.base_url() + "/moved/v1/chat/completions?api-version=1&token=s3cret";
  server.Push({307, {{"Location", moved}}, ""});
  HttpResponse resp;
  HttpFailure failure;
  std::string err;
  ASSERT_TRUE(HttpPost({server.base_url() + "/v1/chat/completions", {}, "{}"}, HttpLimits{}, &resp, &failure, &err))
      << err;
  EXPECT_EQ(resp.status, 307);
  EXPECT_EQ(server.requests().size(), 1u) << "followed to the same server";
  EXPECT_NE(resp.body.find("redirected to " + server.base_url() + "/moved/v1/chat/completions?api-version=***&token=***"),
            std::string::npos)
      << resp.body;
  EXPECT_NE(resp.body.find("not followed"), std::string::npos) << resp.body;
  EXPECT_EQ(resp.body.find("s3cret"), std::string::npos) << resp.body;

  // A 302 with a body of its own keeps it after the note; one without a Location says so.
  server.Push({302, {{"Location", "/elsewhere"}}, "<html>Found</html>"});
  ASSERT_TRUE(HttpPost({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, &resp, &failure, &err)) << err;
  EXPECT_EQ(resp.status, 302);
  EXPECT_EQ(resp.body.rfind("redirected to /elsewhere; not followed", 0), 0u) << resp.body;
  EXPECT_NE(resp.body.find("<html>Found</html>"), std::string::npos) << resp.body;
  server.Push({308, {}, ""});
  ASSERT_TRUE(HttpPost({server.base_url() + "/x", {}, "{}"}, HttpLimits{}, &resp, &failure, &err)) << err;
  EXPECT_EQ(resp.body, "redirected, without a Location header; not followed");
}

}  // namespace
}  // namespace forgek
