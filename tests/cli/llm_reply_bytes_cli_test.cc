// End to end: a provider's Latin-1 error page (issue 29, item 6). The refusal reaches the user and the
// run's record, the run is recorded `failed` with it (was "internal error: invalid UTF-8 byte"), and
// the store stays readable: `knowledge export` and a replay of the run read its exchanges.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/llm_test_server.h"
#include "forgek/core/utf8_text.h"
#include "forgek/knowledge/store.h"
#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

const std::string kLatin1Page = "<html><body>Acc\xE8s refus\xE9 par le proxy</body></html>";
const std::string kRepaired = "Acc\xEF\xBF\xBDs refus\xEF\xBF\xBD par le proxy";

TEST(LlmReplyBytesCli, ALatin1RefusalIsRecordedAndTheStoreStaysReadable) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  std::string store = dir.file("store.db");
  testing::FakeLlmServer server;
  server.SetFallback([](const testing::ReceivedRequest&, int) {
    return testing::ScriptedResponse{403, {{"Content-Type", "text/html; charset=iso-8859-1"}}, kLatin1Page};
  });
  std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.file("cache"), "XDG_DATA_HOME=" + dir.file("xdg"),
                                  "CUDA_VISIBLE_DEVICES=", "FORGEK_KNOWLEDGE=" + SourceDir() + "/knowledge",
                                  "OPENAI_API_KEY=sk-test-key-123456", "FORGEK_LLM_BASE_URL="};
  CommandResult r = RunForgek({"--operators", ops, "--store", store, "run", "--op", "tiny_scale", "--agent", "llm",
                               "--model", "gpt-x", "--base-url", server.base_url() + "/v1", "--compile-only",
                               "--iterations", "1", "--batch", "1"},
                              env);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("permission denied (HTTP 403"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kRepaired), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("invalid UTF-8"), std::string::npos) << r.err;

  std::string run_id;
  {
    Store s;
    std::string err;
    ASSERT_TRUE(s.Open(store, &err, StoreMode::read_only)) << err;
    std::vector<RunRecord> runs;
    ASSERT_TRUE(s.ListRuns("tiny_scale", "", &runs, &err)) << err;
    ASSERT_EQ(runs.size(), 1u);
    run_id = runs[0].id;
    EXPECT_EQ(runs[0].status, "failed");
    std::string error = nlohmann::json::parse(runs[0].summary_json).value("error", "");
    EXPECT_NE(error.find(kRepaired), std::string::npos) << runs[0].summary_json;
    std::vector<ExchangeRecord> exchanges;
    ASSERT_TRUE(s.ListExchanges(run_id, &exchanges, &err)) << err;
    ASSERT_FALSE(exchanges.empty());
    for (const ExchangeRecord& x : exchanges) {
      EXPECT_TRUE(IsValidUtf8(x.response_json)) << x.response_json;
      EXPECT_TRUE(IsValidUtf8(x.error)) << x.error;
      EXPECT_TRUE(IsValidUtf8(x.request_json));
    }
  }
  CommandResult exported = RunForgek({"--store", store, "knowledge", "export"}, env);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find(kRepaired), std::string::npos) << exported.out.substr(0, 2000);

  // The replay meets the recorded refusal and reports it the same way.
  CommandResult replay = RunForgek({"--operators", ops, "--store", store, "run", "--op", "tiny_scale", "--agent",
                                    "replay", "--from", run_id, "--compile-only", "--iterations", "1", "--batch", "1"},
                                   env);
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_NE(replay.err.find(kRepaired), std::string::npos) << replay.err;
  EXPECT_EQ(replay.err.find("invalid UTF-8"), std::string::npos) << replay.err;
}

// A store written before the fix holds the page as it came: its export still works (U+FFFD).
TEST(LlmReplyBytesCli, AnOlderStoreWithRawBytesStillExports) {
  TempDir dir;
  std::string store = dir.file("store.db");
  {
    Store s;
    std::string err;
    ASSERT_TRUE(s.Open(store, &err)) << err;
    ExchangeRecord x;
    x.provider = "openai";
    x.model = "gpt-x";
    x.response_json = kLatin1Page;
    x.error = "request refused (HTTP 403 from http://127.0.0.1/v1/chat/completions): " + kLatin1Page;
    ASSERT_TRUE(s.AddExchange(&x, &err)) << err;
  }
  CommandResult r = RunForgek({"--store", store, "knowledge", "export"});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // was: internal error, invalid UTF-8 byte
  EXPECT_NE(r.out.find(kRepaired), std::string::npos) << r.out.substr(0, 2000);
}

}  // namespace
}  // namespace forgek
