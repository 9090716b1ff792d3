// Anthropic Messages: POST {base}/v1/messages with x-api-key and anthropic-version.
#include <nlohmann/json.hpp>

#include "agent/llm_provider.h"

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
    req.url = base_url + "/v1/messages";
    req.headers = {{"Content-Type", "application/json"}, {"x-api-key", key}, {"anthropic-version", "2023-06-01"}};
    req.body = body.dump();
    return req;
  }

  bool ParseReply(const std::string& body, LlmReply* out, std::string* err) const override {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      *err = "the response is not JSON";
      return false;
    }
    if (!doc.contains("content") || !doc["content"].is_array()) {
      *err = "the response has no content array";
      return false;
    }
    *out = LlmReply{};
    for (const json& part : doc["content"]) {
      // Text parts carry the answer; thinking and tool parts are not part of it.
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string()) {
        out->text += part["text"].get<std::string>();
      }
    }
    if (doc.contains("stop_reason") && doc["stop_reason"].is_string()) {
      out->stop_reason = doc["stop_reason"].get<std::string>();
    }
    if (doc.contains("usage") && doc["usage"].is_object()) {
      const json& usage = doc["usage"];
      out->has_usage = usage.contains("input_tokens") && usage["input_tokens"].is_number_integer();
      out->input_tokens = usage.value("input_tokens", int64_t{0});
      out->output_tokens = usage.value("output_tokens", int64_t{0});
    }
    return true;
  }

  bool StoppedAtTokenLimit(const std::string& stop_reason) const override { return stop_reason == "max_tokens"; }
};

}  // namespace

std::unique_ptr<LlmProvider> MakeAnthropicProvider() { return std::make_unique<AnthropicProvider>(); }

}  // namespace forgek
