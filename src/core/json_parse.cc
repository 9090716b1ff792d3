// Parsing JSON that comes from outside with bounded nesting and size: a linear scan first, then nlohmann.
#include "forgek/core/json_parse.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "forgek/core/json_location.h"

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

using OrderedJson = nlohmann::ordered_json;

// Builds an ordered_json as nlohmann's own parser does (a repeated key keeps its first place and
// takes the last value), but finds a repeated key through a hash of the object's keys. ordered_map
// searches its members one by one on every insertion, so an object of n members cost n^2 string
// comparisons: a manifest of 150 000 lets took minutes before anything was checked.
class OrderedBuilder {
 public:
  explicit OrderedBuilder(OrderedJson* root) : root_(root) {}

  bool null() { return Place(OrderedJson(nullptr)); }
  bool boolean(bool v) { return Place(OrderedJson(v)); }
  bool number_integer(OrderedJson::number_integer_t v) { return Place(OrderedJson(v)); }
  bool number_unsigned(OrderedJson::number_unsigned_t v) { return Place(OrderedJson(v)); }
  bool number_float(OrderedJson::number_float_t v, const std::string&) { return Place(OrderedJson(v)); }
  bool string(std::string& v) { return Place(OrderedJson(std::move(v))); }
  bool binary(OrderedJson::binary_t& v) { return Place(OrderedJson::binary(std::move(v))); }
  bool start_object(std::size_t) { return Open(OrderedJson::object()); }
  bool start_array(std::size_t) { return Open(OrderedJson::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(std::string& k) {
    Container& c = Members(*open_.back().value);
    auto [it, fresh] = open_.back().index.emplace(k, c.size());
    if (fresh) c.emplace_back(std::move(k), nullptr);
    slot_ = &c[it->second].second;
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& ex) {
    throw ex;  // the caller reports nlohmann's message and byte, as for every other parse
  }

 private:
  using Container = OrderedJson::object_t::Container;  // the vector ordered_map keeps its members in
  struct OpenValue {
    OrderedJson* value;
    std::unordered_map<std::string, size_t> index;  // key -> place in the object (objects only)
  };

  static Container& Members(OrderedJson& object) { return *object.get_ptr<OrderedJson::object_t*>(); }

  // Puts a value where it belongs: the root, the next element of the open array, or the member
  // whose key came last. A container that is open is never resized while a child of it is open, so
  // the pointers kept in open_ stay valid.
  OrderedJson* Put(OrderedJson v) {
    if (open_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    OrderedJson& top = *open_.back().value;
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool Place(OrderedJson v) {
    Put(std::move(v));
    return true;
  }
  bool Open(OrderedJson v) {
    open_.push_back({Put(std::move(v)), {}});
    return true;
  }
  bool Close() {
    open_.pop_back();
    return true;
  }

  OrderedJson* root_;
  std::vector<OpenValue> open_;
  OrderedJson* slot_ = nullptr;
};

void ParseInto(std::string_view text, nlohmann::json* out) { *out = nlohmann::json::parse(text.begin(), text.end()); }

void ParseInto(std::string_view text, OrderedJson* out) {
  OrderedJson root;
  OrderedBuilder builder(&root);
  OrderedJson::sax_parse(text.begin(), text.end(), &builder);
  *out = std::move(root);
}

template <typename J>
bool ParseAny(std::string_view text, J* out, JsonParseError* error, const JsonLimits& limits) {
  if (!CheckJsonLimits(text, limits, error)) return false;
  try {
    ParseInto(text, out);
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
