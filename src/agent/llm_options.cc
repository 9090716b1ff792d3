// LLM agent options resolved from the environment: provider names, base URL, key variable.
#include <cstdlib>

#include "forgek/core/url_text.h"
#include "forgek/agent/llm.h"

namespace forgek {
namespace {

std::string EnvOrEmpty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

bool ParseLlmProvider(const std::string& s, LlmProviderKind* out) {
  if (s == "openai") {
    *out = LlmProviderKind::openai;
  } else if (s == "anthropic") {
    *out = LlmProviderKind::anthropic;
  } else {
    return false;
  }
  return true;
}

const char* LlmProviderName(LlmProviderKind p) { return p == LlmProviderKind::anthropic ? "anthropic" : "openai"; }

std::string ResolveLlmBaseUrl(const LlmOptions& opts) {
  bool anthropic = opts.provider == LlmProviderKind::anthropic;
  std::string url = opts.base_url;
  if (url.empty()) url = EnvOrEmpty("FORGEK_LLM_BASE_URL");
  if (url.empty()) url = EnvOrEmpty(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
  if (url.empty()) url = anthropic ? "https://api.anthropic.com" : "https://api.openai.com/v1";
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool CheckLlmBaseUrl(const std::string& url, const std::string& key_env, std::string* err) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    *err = "base URL '" + RedactUrl(url) + "' must start with http:// or https://";
    return false;
  }
  if (UrlHasUserinfo(url)) {
    *err = "base URL '" + RedactUrl(url) + "' carries a user name or password: remove it, and put the API key in $" +
           key_env + " (or the variable --api-key-env names) instead";
    return false;
  }
  return true;
}

std::string ResolveLlmKeyEnv(const LlmOptions& opts) {
  if (!opts.key_env.empty()) return opts.key_env;
  return opts.provider == LlmProviderKind::anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

}  // namespace forgek
