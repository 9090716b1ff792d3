// Validation of imported rows: an import is untrusted, and the store and `knowledge show` trust what it holds.
#include "knowledge/import_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

#include "core/json_parse.h"
#include "core/token_count.h"
#include "forgek/evaluation.h"

namespace forgek::store_detail {
namespace {

using nlohmann::json;

std::string TypeOf(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  return v.is_array() ? "an array" : "an object";
}

using Key = std::pair<std::string, std::string>;  // table, column

// Allowed words of enumerated columns.
const std::set<std::string>* Enumeration(const Key& key) {
  static const std::set<std::string> verdicts = {"hypothesis", "validated", "refuted"};
  static const std::set<std::string> statuses = {"running", "finished", "failed", "interrupted"};
  // "attempt": evidence of exports written before schema 4, checked and then left out.
  static const std::set<std::string> evidence_kinds = {"observation", "comparison", "ablation", "attempt"};
  if (key == Key{"decisions", "verdict"}) return &verdicts;
  if (key == Key{"runs", "status"}) return &statuses;
  if (key == Key{"evidence", "kind"}) return &evidence_kinds;
  return nullptr;
}

// Numeric columns that may be negative (a metric value as observed).
bool MayBeNegative(const Key& key) { return key == Key{"observations", "number"}; }

// Integer columns read into an `int`.
bool IsIntField(const Key& key) {
  static const std::set<Key> ints = {{"decisions", "supporting"}, {"decisions", "contradicting"},
                                     {"decisions", "comparisons"},
                                     {"attempts", "iteration"},   {"exchanges", "iteration"},
                                     {"exchanges", "turn"},       {"exchanges", "http_status"},
                                     {"devices", "sm_count"}};
  return ints.count(key) > 0;
}

// 0/1 columns.
bool IsFlag(const Key& key) {
  return key == Key{"attempt_measurements", "correct"} || key == Key{"devices", "calibrated"} ||
         key == Key{"evidence", "supports"};
}

// JSON text columns: 'o' an object, 'a' an array, 0 not JSON text.
char JsonKind(const Key& key) {
  const std::string& c = key.second;
  if (key == Key{"exchanges", "response_json"}) return 0;  // the raw reply body, JSON or not
  if (key == Key{"mechanisms", "json"}) return 'o';
  if (c == "mechanisms_json" || c == "archs_json" || c == "operators_json") return 'a';
  if (c.size() > 5 && c.compare(c.size() - 5, 5, "_json") == 0) return 'o';
  return 0;
}

bool CheckNumber(const Key& key, const json& value, std::string* err) {
  double v = value.get<double>();
  if (!std::isfinite(v)) {
    *err = "expected a finite number";
    return false;
  }
  if (key == Key{"decisions", "confidence"} && (v < 0 || v > 1)) {
    *err = "expected a confidence between 0 and 1, got " + value.dump();
    return false;
  }
  if (!MayBeNegative(key) && v < 0) {
    *err = "expected a number >= 0, got " + value.dump();
    return false;
  }
  return true;
}

bool CheckInteger(const Key& key, const json& value, std::string* err) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    *err = "expected an integer that fits 64 bits, got " + value.dump();
    return false;
  }
  int64_t v = value.is_boolean() ? static_cast<int64_t>(value.get<bool>()) : value.get<int64_t>();
  if (v < 0) {
    *err = "expected an integer >= 0, got " + value.dump();
    return false;
  }
  if (IsFlag(key) && v > 1) {
    *err = "expected 0 or 1, got " + value.dump();
    return false;
  }
  // Token counts are bounded as a provider's usage is: larger ones would wrap the sums of a replay.
  bool tokens = key == Key{"exchanges", "prompt_tokens"} || key == Key{"exchanges", "completion_tokens"};
  if (tokens && v > kMaxTokenCount) {
    *err = "expected a token count up to " + std::to_string(kMaxTokenCount) + ", got " + value.dump();
    return false;
  }
  if (IsIntField(key) && v > std::numeric_limits<int>::max()) {
    *err = "expected an integer up to " + std::to_string(std::numeric_limits<int>::max()) + ", got " + value.dump();
    return false;
  }
  return true;
}

bool CheckText(const Key& key, const json& value, std::string* err) {
  const std::string& s = value.get_ref<const std::string&>();
  if (const auto* words = Enumeration(key); words && !words->count(s)) {
    std::string list;
    for (const auto& w : *words) list += (list.empty() ? "" : ", ") + w;
    *err = "expected one of " + list + ", got \"" + s.substr(0, 40) + "\"";
    return false;
  }
  if (key == Key{"attempts", "outcome"}) {
    Outcome o;
    if (!ParseOutcome(s, &o)) {
      *err = "expected an outcome (compile_error, wrong, slower, faster, ...), got \"" + s.substr(0, 40) + "\"";
      return false;
    }
  }
  char kind = JsonKind(key);
  if (kind == 0) return true;
  json parsed;
  JsonParseError parse_error;
  if (!ParseJsonLimited(s, &parsed, &parse_error)) {
    *err = "expected JSON text: " + parse_error.message + " (at byte " + std::to_string(parse_error.offset) + ")";
    return false;
  }
  if (kind == 'o' ? !parsed.is_object() : !parsed.is_array()) {
    *err = std::string("expected JSON text holding ") + (kind == 'o' ? "an object" : "an array") + ", got " +
           TypeOf(parsed);
    return false;
  }
  return true;
}

}  // namespace

bool CheckImportValue(const std::string& table, const ColumnInfo& column, const json& value, std::string* err) {
  Key key{table, column.name};
  const std::string& type = column.type;
  std::string expected = type == "INTEGER" ? "an integer" : type == "REAL" ? "a number" : "a string";
  if (value.is_null()) {
    if (!column.not_null) return true;
    *err = "expected " + expected + ", got null";
    return false;
  }
  bool ok_type = type == "INTEGER" ? value.is_number_integer() || value.is_boolean()
                 : type == "REAL"  ? value.is_number()
                                   : value.is_string();
  if (!ok_type) {
    *err = "expected " + expected + ", got " + TypeOf(value);
    return false;
  }
  if (type == "INTEGER") return CheckInteger(key, value, err);
  if (type == "REAL") return CheckNumber(key, value, err);
  return CheckText(key, value, err);
}

}  // namespace forgek::store_detail
