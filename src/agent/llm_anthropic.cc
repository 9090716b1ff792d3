// Anthropic Messages: POST {base}/v1/messages with x-api-key and anthropic-version.
#include <nlohmann/json.hpp>

#include "llm_provider.h"
#include "forgek/core/url_text.h"

namespace forgek {
namespace {

using nlohmann::json;

class AnthropicProvider : public LlmProvider {
 public:
  LlmProviderKind kind() const override { return LlmProviderKind::anthropic; }
  std::string KeyHeader() const override { return "x-api-key"; }

  HttpRequest BuildRequest(const std::string& base_url, const LlmOptions& opts, const LlmConversation& conv,
                           const std::string& key) const override {
    json messages = json::array();
    for (const auto& m : conv.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", opts.model}, {"max_tokens", opts.max_output_tokens}, {"messages", messages}};
    if (!conv.system.empty()) body["system"] = conv.system;
    if (opts.temperature) body["temperature"] = *opts.temperature;
    HttpRequest req;
    req.url = UrlWithPath(base_url, "/v1/messages");
    req.headers = {{"Content-Type", "application/json"}, {"x-api-key", key}, {"anthropic-version", "2023-06-01"}};
    req.body = body.dump();
    return req;
  }

  bool ParseReply(const std::string& body, LlmReply* out, std::string* err) const override {
    json doc;
    if (!ParseReplyObject(body, &doc, err)) return false;
    if (!doc.contains("content") && ReplyReportsError(doc, err)) return false;
    if (!doc.contains("content") || !doc["content"].is_array()) {
      *err = "content: the response has no content array";
      return false;
    }
    LlmReply reply;
    size_t index = 0;
    for (const json& part : doc["content"]) {
      std::string path = "content[" + std::to_string(index++) + "]";
      if (!part.is_object()) {
        *err = path + ": expected an object";
        return false;
      }
      std::string type;
      if (!ReadReplyString(part, path, "type", &type, err)) return false;
      // Text parts carry the answer; thinking and tool parts are not part of it.
      if (type != "text") continue;
      std::string text;
      if (!ReadReplyString(part, path, "text", &text, err)) return false;
      reply.text += text;
    }
    if (!ReadReplyString(doc, "", "stop_reason", &reply.stop_reason, err)) return false;
    if (!ReadReplyUsage(doc, "input_tokens", "output_tokens", &reply, err)) return false;
    *out = std::move(reply);
    return true;
  }

  bool StoppedAtTokenLimit(const std::string& stop_reason) const override { return stop_reason == "max_tokens"; }
};

}  // namespace

std::unique_ptr<LlmProvider> MakeAnthropicProvider() { return std::make_unique<AnthropicProvider>(); }

}  // namespace forgek
