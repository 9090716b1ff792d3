// Typed JSON field access with located diagnostics, shared by the operator and candidate loaders.
#include "json_fields.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "forgek/core/suggest.h"

namespace forgek {

std::string JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unknown value";
  }
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

size_t NameOffset(const std::string& text, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool starts = at == 0 || !word(text[at - 1]);
    bool ends = at + name.size() >= text.size() || !word(text[at + name.size()]);
    if (starts && ends) return at;
  }
  return 0;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

void FieldReader::Error(const std::string& path, const std::string& message) {
  TextPosition p = locator_ ? locator_->ValueAt(path) : TextPosition{};
  diags_->push_back({file_, path, p.line, p.column, message});
}

void FieldReader::KeyError(const std::string& path, const std::string& message) {
  TextPosition p = locator_ ? locator_->KeyAt(path) : TextPosition{};
  diags_->push_back({file_, path, p.line, p.column, message});
}

void FieldReader::ExprError(const std::string& path, const Diagnostic& expr_diag, size_t offset) {
  TextPosition p;
  if (locator_)
    p = expr_diag.column > 0 ? locator_->InString(path, expr_diag.column - 1 + offset) : locator_->ValueAt(path);
  diags_->push_back({file_, path, p.line, p.column, expr_diag.message});
}

const Json* FieldReader::Member(const Json& obj, const std::string& obj_path, const std::string& key,
                                bool required) {
  auto it = obj.find(key);
  if (it != obj.end()) return &*it;
  if (required) Error(JsonPathKey(obj_path, key), "required field is missing");
  return nullptr;
}

bool FieldReader::String(const Json& obj, const std::string& obj_path, const std::string& key, bool required,
                         std::string* out) {
  const Json* v = Member(obj, obj_path, key, required);
  if (!v) return false;
  if (!v->is_string()) {
    Error(JsonPathKey(obj_path, key), "expected a string, got " + JsonTypeName(*v));
    return false;
  }
  *out = v->get<std::string>();
  return CheckText(JsonPathKey(obj_path, key), *out);
}

bool FieldReader::CheckText(const std::string& path, const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n') continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", c);
    Error(path, std::string("holds ") + (c == 0 ? "NUL" : c == 0x1b ? "ESC" : "the control character ") +
                    (c == 0 || c == 0x1b ? "" : hex) + " at byte " + std::to_string(i) +
                    "; control characters other than tab and newline are refused");
    return false;
  }
  return true;
}

bool FieldReader::Bool(const Json& obj, const std::string& obj_path, const std::string& key, bool* out) {
  const Json* v = Member(obj, obj_path, key, false);
  if (!v) return false;
  if (!v->is_boolean()) {
    Error(JsonPathKey(obj_path, key), "expected true or false, got " + JsonTypeName(*v));
    return false;
  }
  *out = v->get<bool>();
  return true;
}

bool FieldReader::Number(const Json& obj, const std::string& obj_path, const std::string& key, bool required,
                         double* out) {
  const Json* v = Member(obj, obj_path, key, required);
  if (!v) return false;
  if (!v->is_number()) {
    Error(JsonPathKey(obj_path, key), "expected a number, got " + JsonTypeName(*v));
    return false;
  }
  *out = v->get<double>();
  return true;
}

bool FieldReader::Integer(const Json& v, const std::string& path, int64_t* out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(INT64_MAX)) {
      *out = static_cast<int64_t>(u);
      return true;
    }
    Error(path, "integer does not fit in 64 bits");
    return false;
  }
  Error(path, "expected an integer, got " + JsonTypeName(v));
  return false;
}

bool FieldReader::StringList(const Json& obj, const std::string& obj_path, const std::string& key,
                             bool required, std::vector<std::string>* out) {
  const Json* v = Member(obj, obj_path, key, required);
  if (!v) return false;
  std::string path = JsonPathKey(obj_path, key);
  if (!v->is_array()) {
    Error(path, "expected an array of strings, got " + JsonTypeName(*v));
    return false;
  }
  bool ok = true;
  std::vector<std::string> items;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    if (!item.is_string()) {
      Error(JsonPathIndex(path, i), "expected a string, got " + JsonTypeName(item));
      ok = false;
      continue;
    }
    if (!CheckText(JsonPathIndex(path, i), item.get_ref<const std::string&>())) {
      ok = false;
      continue;
    }
    items.push_back(item.get<std::string>());
  }
  if (ok) *out = std::move(items);
  return ok;
}

bool FieldReader::Expression(const Json& v, const std::string& path, std::string* out,
                             std::unique_ptr<Expr>* parsed) {
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_number_integer()) {
    text = v.dump();
  } else {
    Error(path, "expected an expression (a string or an integer), got " + JsonTypeName(v));
    return false;
  }
  Diagnostic d;
  std::unique_ptr<Expr> e = Expr::Parse(text, &d);
  if (!e) {
    if (!v.is_string()) d.column = 0;
    ExprError(path, d);
    return false;
  }
  *out = text;
  if (parsed) *parsed = std::move(e);
  return true;
}

bool FieldReader::ExpressionList(const Json& obj, const std::string& obj_path, const std::string& key,
                                 bool required, size_t max_len, std::vector<std::string>* out) {
  const Json* v = Member(obj, obj_path, key, required);
  if (!v) return false;
  std::string path = JsonPathKey(obj_path, key);
  if (!v->is_array()) {
    Error(path, "expected an array of expressions, got " + JsonTypeName(*v));
    return false;
  }
  if (v->empty() || v->size() > max_len) {
    Error(path, "expected 1 to " + std::to_string(max_len) + " expressions, got " + std::to_string(v->size()));
    return false;
  }
  bool ok = true;
  std::vector<std::string> items(v->size());
  for (size_t i = 0; i < v->size(); ++i) ok = Expression((*v)[i], JsonPathIndex(path, i), &items[i]) && ok;
  if (ok) *out = std::move(items);
  return ok;
}

bool FieldReader::CheckNames(const std::string& path, const std::string& text,
                             const std::vector<std::string>& known, const std::string& scope, size_t offset) {
  return CheckNamesWith(
      path, text, [&](const std::string& name) { return std::find(known.begin(), known.end(), name) != known.end(); },
      [&] { return known; }, scope, offset);
}

bool FieldReader::CheckNames(const std::string& path, const std::string& text, const std::set<std::string>& known,
                             const std::string& scope, size_t offset) {
  return CheckNamesWith(
      path, text, [&](const std::string& name) { return known.count(name) > 0; },
      [&] { return std::vector<std::string>(known.begin(), known.end()); }, scope, offset);
}

// `known` is asked for the whole list only when a name is unknown (for the "did you mean" hint).
bool FieldReader::CheckNamesWith(const std::string& path, const std::string& text,
                                 const std::function<bool(const std::string&)>& is_known,
                                 const std::function<std::vector<std::string>()>& known, const std::string& scope,
                                 size_t offset) {
  Diagnostic d;
  std::unique_ptr<Expr> e = Expr::Parse(text, &d);
  if (!e) {
    ExprError(path, d, offset);
    return false;
  }
  bool ok = true;
  for (const std::string& name : e->Names()) {
    if (is_known(name)) continue;
    ExprError(path, {"", "", 1, static_cast<int>(NameOffset(text, name)) + 1,
                     "unknown name '" + name + "'" + DidYouMean(name, known()) + "; " + scope},
              offset);
    ok = false;
  }
  return ok;
}

void FieldReader::UnknownMembers(const Json& obj, const std::string& obj_path,
                                 const std::vector<std::string>& known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool found = false;
    for (const std::string& k : known) found = found || k == it.key();
    if (!found) KeyError(JsonPathKey(obj_path, it.key()), "unknown field" + DidYouMean(it.key(), known));
  }
}

void FieldReader::DuplicateKeys() {
  if (!locator_) return;
  for (const auto& [path, where] : locator_->duplicate_keys())
    diags_->push_back({file_, path, where.line, where.column, "field appears twice in the same object"});
}

}  // namespace forgek
