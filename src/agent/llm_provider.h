// The two chat APIs behind one interface: request bodies, reply parsing, error texts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/agent/http.h"
#include "forgek/agent/llm.h"

namespace forgek {

struct LlmMessage {
  std::string role;  // user | assistant
  std::string content;
};

struct LlmConversation {
  std::string system;
  std::vector<LlmMessage> messages;
};

struct LlmReply {
  std::string text;         // the assistant's text, all text parts joined
  std::string stop_reason;  // finish_reason / stop_reason as the API names it
  bool has_usage = false;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  virtual LlmProviderKind kind() const = 0;
  // The POST for `conv`; `key` goes into the auth header only.
  virtual HttpRequest BuildRequest(const std::string& base_url, const LlmOptions& opts, const LlmConversation& conv,
                                   const std::string& key) const = 0;
  // The name of the header carrying the key, for redaction.
  virtual std::string KeyHeader() const = 0;
  // Parses a 2xx body; false with `err` when it is not the API's JSON.
  virtual bool ParseReply(const std::string& body, LlmReply* out, std::string* err) const = 0;
  // True when the model stopped because it ran out of output tokens.
  virtual bool StoppedAtTokenLimit(const std::string& stop_reason) const = 0;
};

std::unique_ptr<LlmProvider> MakeLlmProvider(LlmProviderKind kind);

// Reply parsing helpers shared by both APIs. A reply is untrusted: each reports the field it found
// wrong instead of throwing.
// The body as a JSON object (depth and size limited, no key twice in one object).
bool ParseReplyObject(const std::string& body, nlohmann::json* doc, std::string* err);
// The optional string member `key` of `obj` (at `path`): absent or null leaves `out` alone.
bool ReadReplyString(const nlohmann::json& obj, const std::string& path, const char* key, std::string* out,
                     std::string* err);
// usage.<input_key> and usage.<output_key>: integers from 0 to kMaxTokenCount when present; an absent usage
// leaves has_usage false (the caller estimates).
bool ReadReplyUsage(const nlohmann::json& doc, const char* input_key, const char* output_key, LlmReply* out,
                    std::string* err);

// The message an API puts in an error body ({"error": {"message": ...}} for both APIs), else the
// body's start; as ProviderText makes it.
std::string ApiErrorMessage(const std::string& body);
// Text from the provider fit for a message: control characters (ESC, line breaks) made spaces,
// cut beyond 300 bytes with "...".
std::string ProviderText(const std::string& text);
// True with `err` (quoting the provider's message) when a 2xx reply holds an "error" member
// instead of an answer.
bool ReplyReportsError(const nlohmann::json& doc, std::string* err);

// `text` with every occurrence of `secret` replaced by "[redacted]" (secrets shorter than 6
// characters are left alone: replacing them would mangle ordinary text).
std::string RedactSecret(std::string text, const std::string& secret);

}  // namespace forgek
