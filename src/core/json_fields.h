// Typed reading of JSON fields that reports every problem as a located Diagnostic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/json_location.h"
#include "forgek/core/diagnostic.h"
#include "forgek/core/expr.h"

namespace forgek {

// Objects keep their members in file order (params and lets depend on it).
using Json = nlohmann::ordered_json;

// "a string", "an integer", ... for messages such as "expected an array, got a string".
std::string JsonTypeName(const Json& v);

// Reads fields of one JSON document, adding a Diagnostic (file, field path, line, column) for each
// problem. Readers return false when the field is absent or wrong, so callers can go on checking
// the rest and report everything at once.
class FieldReader {
 public:
  FieldReader(std::string file, const JsonLocator* locator, Diagnostics* diags)
      : file_(std::move(file)), locator_(locator), diags_(diags) {}

  void Error(const std::string& path, const std::string& message);     // at the value
  void KeyError(const std::string& path, const std::string& message);  // at the member's key
  // An expression error: `expr_diag.column` is a position inside the expression, which starts
  // `offset` bytes into the string at `path` (after a prefix such as "i64:").
  void ExprError(const std::string& path, const Diagnostic& expr_diag, size_t offset = 0);
  size_t error_count() const { return diags_->size() - first_; }
  const std::string& file() const { return file_; }

  // The member `key` of `obj`, or nullptr (with an error when `required`).
  const Json* Member(const Json& obj, const std::string& obj_path, const std::string& key, bool required);

  // A string field; one holding a control character other than tab and newline (NUL cuts printed
  // text, ESC drives the terminal) is an error naming the character and its byte.
  bool String(const Json& obj, const std::string& obj_path, const std::string& key, bool required,
              std::string* out);
  // Whether text read at `path` is free of control characters other than tab and newline; an error if not.
  bool CheckText(const std::string& path, const std::string& text);
  bool Bool(const Json& obj, const std::string& obj_path, const std::string& key, bool* out);
  bool Number(const Json& obj, const std::string& obj_path, const std::string& key, bool required, double* out);
  bool Integer(const Json& v, const std::string& path, int64_t* out);
  // An array of strings (possibly empty).
  bool StringList(const Json& obj, const std::string& obj_path, const std::string& key, bool required,
                  std::vector<std::string>* out);

  // An expression written as a string ("ceil_div(M, 128)") or as a plain integer (128). On success
  // `out` holds its text and `parsed` (if given) the parsed form.
  bool Expression(const Json& v, const std::string& path, std::string* out,
                  std::unique_ptr<Expr>* parsed = nullptr);
  // A list of 1..max_len expressions (0..max_len when allow_empty).
  bool ExpressionList(const Json& obj, const std::string& obj_path, const std::string& key, bool required,
                      size_t max_len, std::vector<std::string>* out);

  // Reports each name the expression `text` (the string at `path`) reads that is not in `known`,
  // pointing at the name; `scope` describes `known` for the message ("params are M, N, K").
  bool CheckNames(const std::string& path, const std::string& text, const std::vector<std::string>& known,
                  const std::string& scope, size_t offset = 0);
  // The same with `known` as a set, for scopes that grow with the input (a candidate's lets): each
  // name costs a lookup, so checking n lets is n log n rather than n^2.
  bool CheckNames(const std::string& path, const std::string& text, const std::set<std::string>& known,
                  const std::string& scope, size_t offset = 0);

  // Reports every member of `obj` not in `known`, with a close match when there is one.
  void UnknownMembers(const Json& obj, const std::string& obj_path, const std::vector<std::string>& known);
  // Reports keys that appear twice in one object (JSON parsers silently keep one of them).
  void DuplicateKeys();

 private:
  bool CheckNamesWith(const std::string& path, const std::string& text,
                      const std::function<bool(const std::string&)>& is_known,
                      const std::function<std::vector<std::string>()>& known, const std::string& scope, size_t offset);

  std::string file_;
  const JsonLocator* locator_;
  Diagnostics* diags_;
  size_t first_ = diags_->size();
};

// True for [A-Za-z_][A-Za-z0-9_]*.
bool IsIdentifier(const std::string& s);

// 0-based offset of `name` as a whole word in `text` (0 when absent).
size_t NameOffset(const std::string& text, const std::string& name);

// "a, b, c", or "(none)".
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace forgek
