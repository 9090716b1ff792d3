// The two chat APIs behind one interface: request bodies, reply parsing, error texts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "forgek/http.h"
#include "forgek/llm.h"

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

// The message an API puts in an error body ({"error": {"message": ...}} for both APIs), else the
// body's start.
std::string ApiErrorMessage(const std::string& body);

// `text` with every occurrence of `secret` replaced by "[redacted]" (secrets shorter than 6
// characters are left alone: replacing them would mangle ordinary text).
std::string RedactSecret(std::string text, const std::string& secret);

}  // namespace forgek
