// Option resolution: base URL precedence and the key variable per provider.
#include <gtest/gtest.h>

#include <cstdlib>

#include "forgek/agent/llm.h"

namespace forgek {
namespace {

// Sets or clears an environment variable for one test, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(LlmOptions, BaseUrlPrecedence) {
  ScopedEnv forgek("FORGEK_LLM_BASE_URL", nullptr);
  ScopedEnv openai("OPENAI_BASE_URL", nullptr);
  ScopedEnv anthropic("ANTHROPIC_BASE_URL", nullptr);
  LlmOptions o;
  EXPECT_EQ(ResolveLlmBaseUrl(o), "https://api.openai.com/v1");
  o.provider = LlmProviderKind::anthropic;
  EXPECT_EQ(ResolveLlmBaseUrl(o), "https://api.anthropic.com");

  setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic/", 1);
  setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/openai", 1);
  EXPECT_EQ(ResolveLlmBaseUrl(o), "http://127.0.0.1:9/anthropic");  // trailing slash removed
  o.provider = LlmProviderKind::openai;
  EXPECT_EQ(ResolveLlmBaseUrl(o), "http://127.0.0.1:9/openai");

  setenv("FORGEK_LLM_BASE_URL", "http://127.0.0.1:9/forgek", 1);
  EXPECT_EQ(ResolveLlmBaseUrl(o), "http://127.0.0.1:9/forgek");
  o.base_url = "http://127.0.0.1:9/explicit";
  EXPECT_EQ(ResolveLlmBaseUrl(o), "http://127.0.0.1:9/explicit");
}

TEST(LlmOptions, KeyVariablePerProvider) {
  LlmOptions o;
  EXPECT_EQ(ResolveLlmKeyEnv(o), "OPENAI_API_KEY");
  o.provider = LlmProviderKind::anthropic;
  EXPECT_EQ(ResolveLlmKeyEnv(o), "ANTHROPIC_API_KEY");
  o.key_env = "MY_KEY";
  EXPECT_EQ(ResolveLlmKeyEnv(o), "MY_KEY");
}

TEST(LlmOptions, ProviderNames) {
  LlmProviderKind k;
  ASSERT_TRUE(ParseLlmProvider("anthropic", &k));
  EXPECT_EQ(k, LlmProviderKind::anthropic);
  ASSERT_TRUE(ParseLlmProvider("openai", &k));
  EXPECT_EQ(k, LlmProviderKind::openai);
  EXPECT_FALSE(ParseLlmProvider("gemini", &k));
  EXPECT_STREQ(LlmProviderName(LlmProviderKind::anthropic), "anthropic");
}

}  // namespace
}  // namespace forgek
