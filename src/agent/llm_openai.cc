// OpenAI-compatible Chat Completions: POST {base}/chat/completions with a Bearer key.
#include <nlohmann/json.hpp>

#include "agent/llm_provider.h"

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
    req.url = base_url + "/chat/completions";
    req.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + key}};
    req.body = body.dump();
    return req;
  }

  bool ParseReply(const std::string& body, LlmReply* out, std::string* err) const override {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      *err = "the response is not JSON";
      return false;
    }
    const json* choices = doc.contains("choices") ? &doc["choices"] : nullptr;
    if (!choices || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
      *err = "the response has no choices[0]";
      return false;
    }
    const json& choice = (*choices)[0];
    const json* content = choice.contains("message") && choice["message"].is_object() &&
                                  choice["message"].contains("content")
                              ? &choice["message"]["content"]
                              : nullptr;
    *out = LlmReply{};
    if (content && content->is_string()) {
      out->text = content->get<std::string>();
    } else if (!content || !content->is_null()) {
      *err = "choices[0].message.content is missing or not a string";
      return false;
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      out->stop_reason = choice["finish_reason"].get<std::string>();
    }
    if (doc.contains("usage") && doc["usage"].is_object()) {
      const json& usage = doc["usage"];
      out->has_usage = usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer();
      out->input_tokens = usage.value("prompt_tokens", int64_t{0});
      out->output_tokens = usage.value("completion_tokens", int64_t{0});
    }
    return true;
  }

  bool StoppedAtTokenLimit(const std::string& stop_reason) const override { return stop_reason == "length"; }
};

}  // namespace

std::unique_ptr<LlmProvider> MakeOpenAiProvider() { return std::make_unique<OpenAiProvider>(); }

}  // namespace forgek
