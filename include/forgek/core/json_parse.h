// Parsing JSON that comes from outside (files, replies, pipes) with bounded nesting and size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace forgek {

// nlohmann builds, copies and prints trees recursively: a document nested ~100 000 levels deep
// overflows the stack. No document forgek reads needs more than a few levels.
inline constexpr size_t kJsonMaxDepth = 128;
// The largest JSON text forgek parses (a knowledge export, a reply, a store value).
inline constexpr size_t kJsonMaxBytes = size_t{64} << 20;

struct JsonLimits {
  size_t max_depth = kJsonMaxDepth;
  size_t max_bytes = kJsonMaxBytes;
};

// Why a text was refused: a message without position ("invalid JSON: unexpected '}'", "JSON
// nested deeper than 128 levels (the limit)") and the 0-based byte offset in the text it points at.
struct JsonParseError {
  std::string message;
  size_t offset = 0;
};

// Parses `text` into `out`, refusing a text larger than `limits.max_bytes` or nested deeper than
// `limits.max_depth` before any tree is built. Never throws. On failure `out` is untouched.
bool ParseJsonLimited(std::string_view text, nlohmann::json* out, JsonParseError* error,
                      const JsonLimits& limits = {});
bool ParseJsonLimited(std::string_view text, nlohmann::ordered_json* out, JsonParseError* error,
                      const JsonLimits& limits = {});

// The same, with the error as one string that starts with `what` ("operator.json: ...") and gives
// the byte offset: for callers that have no line/column to report.
bool ParseJsonLimited(std::string_view text, const std::string& what, nlohmann::json* out, std::string* error,
                      const JsonLimits& limits = {});

// For readers that treat unusable text as absent (store values written by forgek, optional
// fields): the value, or a discarded value (is_discarded()) when `text` is not JSON or exceeds the
// limits. Never throws.
nlohmann::json ParseJsonLenient(std::string_view text, const JsonLimits& limits = {});

// Checks only the limits (size, nesting depth) of `text`, without parsing it.
bool CheckJsonLimits(std::string_view text, const JsonLimits& limits, JsonParseError* error);

}  // namespace forgek
