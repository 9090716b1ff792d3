// The provider factory and what both APIs share: error bodies and key redaction.
#include "agent/llm_provider.h"

#include <nlohmann/json.hpp>

namespace forgek {

std::unique_ptr<LlmProvider> MakeOpenAiProvider();
std::unique_ptr<LlmProvider> MakeAnthropicProvider();

std::unique_ptr<LlmProvider> MakeLlmProvider(LlmProviderKind kind) {
  return kind == LlmProviderKind::anthropic ? MakeAnthropicProvider() : MakeOpenAiProvider();
}

std::string ApiErrorMessage(const std::string& body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("error")) {
    const auto& error = doc["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string()) {
      return error["message"].get<std::string>();
    }
    if (error.is_string()) return error.get<std::string>();
  }
  constexpr size_t kMaxChars = 300;
  return body.size() > kMaxChars ? body.substr(0, kMaxChars) + "..." : body;
}

std::string RedactSecret(std::string text, const std::string& secret) {
  constexpr size_t kMinSecret = 6;
  if (secret.size() < kMinSecret) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "[redacted]");
  }
  return text;
}

}  // namespace forgek
