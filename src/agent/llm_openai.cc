// OpenAI-compatible Chat Completions: POST {base}/chat/completions with a Bearer key.
#include <nlohmann/json.hpp>

#include "llm_provider.h"
#include "forgek/core/url_text.h"

namespace forgek {
namespace {

using nlohmann::json;

class OpenAiProvider : public LlmProvider {
 public:
  LlmProviderKind kind() const override { return LlmProviderKind::openai; }
  std::string KeyHeader() const override { return "Authorization"; }

  HttpRequest BuildRequest(const std::string& base_url, const LlmOptions& opts, const LlmConversation& conv,
                           const std::string& key) const override {
    json messages = json::array();
    if (!conv.system.empty()) messages.push_back({{"role", "system"}, {"content", conv.system}});
    for (const auto& m : conv.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", opts.model}, {"messages", messages}, {"max_completion_tokens", opts.max_output_tokens}};
    if (opts.temperature) body["temperature"] = *opts.temperature;
    HttpRequest req;
    req.url = UrlWithPath(base_url, "/chat/completions");
    req.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + key}};
    req.body = body.dump();
    return req;
  }

  bool ParseReply(const std::string& body, LlmReply* out, std::string* err) const override {
    json doc;
    if (!ParseReplyObject(body, &doc, err)) return false;
    if (!doc.contains("choices") && ReplyReportsError(doc, err)) return false;
    const json* choices = doc.contains("choices") ? &doc["choices"] : nullptr;
    if (!choices || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
      *err = "choices: the response has no choices[0] object";
      return false;
    }
    const json& choice = (*choices)[0];
    if (!choice.contains("message") || !choice["message"].is_object()) {
      *err = "choices[0].message: missing or not an object";
      return false;
    }
    const json& message = choice["message"];
    LlmReply reply;
    // A null content is an empty answer (a refusal or tool call); any other non-string is malformed.
    if (!message.contains("content")) {
      *err = "choices[0].message.content: missing";
      return false;
    }
    if (!ReadReplyString(message, "choices[0].message", "content", &reply.text, err)) return false;
    if (!ReadReplyString(choice, "choices[0]", "finish_reason", &reply.stop_reason, err)) return false;
    if (!ReadReplyUsage(doc, "prompt_tokens", "completion_tokens", &reply, err)) return false;
    *out = std::move(reply);
    return true;
  }

  bool StoppedAtTokenLimit(const std::string& stop_reason) const override { return stop_reason == "length"; }
};

}  // namespace

std::unique_ptr<LlmProvider> MakeOpenAiProvider() { return std::make_unique<OpenAiProvider>(); }

}  // namespace forgek
