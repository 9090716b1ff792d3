// Parsing JSON that comes from outside with bounded nesting and size: a linear scan first, then nlohmann.
#include "core/json_parse.h"

#include <string>

#include "core/json_location.h"

namespace forgek {

bool CheckJsonLimits(std::string_view text, const JsonLimits& limits, JsonParseError* error) {
  if (text.size() > limits.max_bytes) {
    *error = {"JSON text of " + std::to_string(text.size()) + " bytes is larger than the limit of " +
                  std::to_string(limits.max_bytes) + " bytes",
              0};
    return false;
  }
  // Brackets inside strings do not nest; a backslash escapes the next byte. On text that is not JSON
  // this scan may disagree with the parser only after the point where the parser fails anyway.
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) {
        *error = {"JSON nested deeper than " + std::to_string(limits.max_depth) + " levels (the limit)", i};
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

namespace {

template <typename J>
bool ParseAny(std::string_view text, J* out, JsonParseError* error, const JsonLimits& limits) {
  if (!CheckJsonLimits(text, limits, error)) return false;
  try {
    *out = J::parse(text.begin(), text.end());
    return true;
  } catch (const nlohmann::json::exception& e) {
    auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    std::string owned(text);
    *error = {CleanJsonParseError(e.what()), JsonErrorOffset(owned, 0, parse ? parse->byte : 0, e.what())};
    return false;
  } catch (const std::exception& e) {  // std::bad_alloc on a huge but shallow text
    *error = {std::string("cannot parse JSON: ") + e.what(), 0};
    return false;
  }
}

}  // namespace

bool ParseJsonLimited(std::string_view text, nlohmann::json* out, JsonParseError* error, const JsonLimits& limits) {
  return ParseAny(text, out, error, limits);
}

bool ParseJsonLimited(std::string_view text, nlohmann::ordered_json* out, JsonParseError* error,
                      const JsonLimits& limits) {
  return ParseAny(text, out, error, limits);
}

nlohmann::json ParseJsonLenient(std::string_view text, const JsonLimits& limits) {
  nlohmann::json out;
  JsonParseError ignored;
  if (!ParseJsonLimited(text, &out, &ignored, limits)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return out;
}

bool ParseJsonLimited(std::string_view text, const std::string& what, nlohmann::json* out, std::string* error,
                      const JsonLimits& limits) {
  JsonParseError e;
  if (ParseJsonLimited(text, out, &e, limits)) return true;
  *error = what + ": " + e.message + " (at byte " + std::to_string(e.offset) + ")";
  return false;
}

}  // namespace forgek
