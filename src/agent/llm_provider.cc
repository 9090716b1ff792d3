// The provider factory and what both APIs share: error bodies and key redaction.
#include "llm_provider.h"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "forgek/core/json_location.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/token_count.h"
#include "forgek/core/utf8_text.h"

namespace forgek {

std::unique_ptr<LlmProvider> MakeOpenAiProvider();
std::unique_ptr<LlmProvider> MakeAnthropicProvider();

std::unique_ptr<LlmProvider> MakeLlmProvider(LlmProviderKind kind) {
  return kind == LlmProviderKind::anthropic ? MakeAnthropicProvider() : MakeOpenAiProvider();
}

namespace {

constexpr size_t kMaxProviderMessageChars = 300;

// The message of an API error object ({"error": {"message": ...}} or {"error": "..."}), "" when
// `doc` holds none.
std::string ErrorMessageOf(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("error")) return "";
  const auto& error = doc["error"];
  if (error.is_object() && error.contains("message") && error["message"].is_string())
    return error["message"].get<std::string>();
  if (error.is_string()) return error.get<std::string>();
  return "";
}

}  // namespace

std::string ProviderText(const std::string& text) {
  std::string out;
  // Valid UTF-8 first: the cut below steps back over continuation bytes, and the message is printed
  // and stored.
  for (unsigned char c : ValidUtf8(text)) out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  if (out.size() <= kMaxProviderMessageChars) return out;
  size_t cut = kMaxProviderMessageChars;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return out.substr(0, cut) + "...";
}

std::string ApiErrorMessage(const std::string& body) {
  nlohmann::json doc;
  JsonParseError ignored;
  ParseJsonLimited(body, &doc, &ignored);  // an unreadable body is quoted as text below
  std::string message = ErrorMessageOf(doc);
  return ProviderText(message.empty() ? body : message);
}

bool ReplyReportsError(const nlohmann::json& doc, std::string* err) {
  if (!doc.contains("error") || doc["error"].is_null()) return false;
  std::string message = ErrorMessageOf(doc);
  *err = "error: the provider answered with an error instead of a reply: " +
         (message.empty() ? std::string("(no message)") : ProviderText(message));
  return true;
}

namespace {

std::string TypeName(const nlohmann::json& v) {
  if (v.is_string()) return "a string";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

bool ReadCount(const nlohmann::json& usage, const char* key, bool* present, int64_t* out, std::string* err) {
  *present = usage.contains(key) && !usage[key].is_null();
  if (!*present) return true;
  const nlohmann::json& v = usage[key];
  // A count beyond kMaxTokenCount is no real request's: taken as given it would wrap the budget's
  // sums and let a reply pass --max-tokens.
  bool too_large = v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxTokenCount)
                                          : v.is_number_integer() && v.get<int64_t>() > kMaxTokenCount;
  if (too_large) {
    *err = std::string("usage.") + key + ": " + v.dump() + " tokens is more than any request uses (the limit is " +
           std::to_string(kMaxTokenCount) + ")";
    return false;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = v.get<int64_t>();
    return true;
  }
  *err = std::string("usage.") + key + ": expected a non-negative integer, got " +
         (v.is_number_integer() ? "a negative integer" : TypeName(v));
  return false;
}

}  // namespace

bool ParseReplyObject(const std::string& body, nlohmann::json* doc, std::string* err) {
  JsonParseError parse_error;
  if (!ParseJsonLimited(body, doc, &parse_error)) {
    *err = "the response is not JSON: " + parse_error.message + " (at byte " + std::to_string(parse_error.offset) + ")";
    return false;
  }
  if (!doc->is_object()) {
    *err = "the response is not a JSON object (got " + TypeName(*doc) + ")";
    return false;
  }
  // A key given twice is ambiguous (which choices, which usage?): refused, as operator.json,
  // manifests and imports refuse it.
  JsonLocator locator(body, 0, body.size());
  if (!locator.duplicate_keys().empty()) {
    const auto& [path, where] = locator.duplicate_keys().front();
    *err = path + ": the key appears twice in the same object (line " + std::to_string(where.line) + ", column " +
           std::to_string(where.column) + ")";
    return false;
  }
  return true;
}

bool ReadReplyString(const nlohmann::json& obj, const std::string& path, const char* key, std::string* out,
                     std::string* err) {
  if (!obj.contains(key) || obj[key].is_null()) return true;
  if (!obj[key].is_string()) {
    *err = (path.empty() ? std::string() : path + ".") + key + ": expected a string, got " + TypeName(obj[key]);
    return false;
  }
  *out = obj[key].get<std::string>();
  return true;
}

bool ReadReplyUsage(const nlohmann::json& doc, const char* input_key, const char* output_key, LlmReply* out,
                    std::string* err) {
  if (!doc.contains("usage") || doc["usage"].is_null()) return true;
  const nlohmann::json& usage = doc["usage"];
  if (!usage.is_object()) {
    *err = "usage: expected an object, got " + TypeName(usage);
    return false;
  }
  bool has_input = false, has_output = false;
  if (!ReadCount(usage, input_key, &has_input, &out->input_tokens, err)) return false;
  if (!ReadCount(usage, output_key, &has_output, &out->output_tokens, err)) return false;
  out->has_usage = has_input;
  return true;
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
