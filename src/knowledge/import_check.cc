// Validation of imported rows: an import is untrusted, and the store and `knowledge show` trust what it holds.
#include "import_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include <set>
#include <utility>

#include "forgek/core/json_parse.h"
#include "forgek/core/token_count.h"
#include "forgek/core/decision.h"
#include "forgek/core/evaluation.h"

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
  static const std::set<std::string> verdicts = {DecisionVerdictName(DecisionVerdict::hypothesis),
                                                 DecisionVerdictName(DecisionVerdict::validated),
                                                 DecisionVerdictName(DecisionVerdict::refuted)};
  // A "running" run is stored "interrupted" by the import (it runs elsewhere, never here).
  static const std::set<std::string> statuses = {"running", "finished", "failed", "interrupted"};
  static const std::set<std::string> archs = {"sm90", "sm100"};
  static const std::set<std::string> regimes = {"small", "large", "skinny", "any"};
  // "attempt": evidence of exports written before schema 4, checked and then left out.
  static const std::set<std::string> evidence_kinds = {"observation", "comparison", "ablation", "attempt"};
  if (key == Key{"decisions", "verdict"}) return &verdicts;
  if (key == Key{"runs", "status"}) return &statuses;
  if (key == Key{"evidence", "kind"}) return &evidence_kinds;
  if (key == Key{"decisions", "regime"}) return &regimes;
  if (key.second == "arch") return &archs;
  return nullptr;
}

// Columns that name a row (a primary key) or the row another refers to: never null, never "".
bool IsKeyField(const Key& key) {
  static const std::set<Key> keys = {
      {"devices", "name"},         {"devices", "arch"},      {"operators", "name"},
      {"mechanisms", "id"},        {"runs", "id"},           {"candidates", "hash"},
      {"attempts", "id"},          {"attempts", "run_id"},   {"attempts", "candidate_hash"},
      {"attempt_measurements", "attempt_id"},                {"attempt_measurements", "config"},
      {"profiles", "id"},          {"observations", "id"},   {"decisions", "id"},
      {"evidence", "id"},          {"evidence", "decision_id"}, {"seals", "id"},
      {"seals", "candidate_hash"}, {"exchanges", "id"}};
  return keys.count(key) > 0;
}

// Time columns; those with an empty default ("finished_at" of a run that has not ended) may be "".
bool IsTimeField(const Key& key, bool* may_be_empty) {
  const std::string& c = key.second;
  if (c.size() < 4 || c.compare(c.size() - 3, 3, "_at") != 0) return false;
  *may_be_empty = c != "created_at" && c != "updated_at";
  return true;
}

// A time as the store writes it: 2026-01-31T23:59:59Z (fractional seconds allowed).
bool IsIso8601(const std::string& s) {
  auto digits = [&](size_t at, size_t n, int lo, int hi) {
    if (at + n > s.size()) return false;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    return v >= lo && v <= hi;
  };
  if (s.size() < 20 || !digits(0, 4, 0, 9999) || s[4] != '-' || !digits(5, 2, 1, 12) || s[7] != '-' ||
      !digits(8, 2, 1, 31) || s[10] != 'T' || !digits(11, 2, 0, 23) || s[13] != ':' || !digits(14, 2, 0, 59) ||
      s[16] != ':' || !digits(17, 2, 0, 60))
    return false;
  size_t i = 19;
  if (s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  return i + 1 == s.size() && s[i] == 'Z';
}

// The first control character a text column must not hold: NUL cuts text where it is printed and
// ESC drives the terminal. Tab, newline and carriage return are text. The exchanges table keeps
// raw provider traffic as it came and is never printed raw: it is left as is.
const char* ControlCharacter(const Key& key, const std::string& s, size_t* at) {
  if (key.first == "exchanges") return nullptr;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    if (c == '\t' || c == '\n' || c == '\r') continue;
    *at = i;
    return c == 0 ? "NUL" : c == 0x1b ? "ESC" : "a control character";
  }
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
  if (s.empty() && IsKeyField(key)) {
    *err = "expected a non-empty string, got \"\"";
    return false;
  }
  size_t at = 0;
  if (const char* what = ControlCharacter(key, s, &at)) {
    *err = std::string("holds ") + what + " (byte " + std::to_string(at) + "); control characters are refused";
    return false;
  }
  bool may_be_empty = false;
  if (IsTimeField(key, &may_be_empty) && !(may_be_empty && s.empty()) && !IsIso8601(s)) {
    *err = "expected a time such as 2026-01-31T23:59:59Z, got \"" + s.substr(0, 40) + "\"";
    return false;
  }
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
    if (IsKeyField(key)) {
      *err = "expected a non-empty string, got null";
      return false;
    }
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

std::vector<std::string> RequiredImportKeys(const std::string& table) {
  static const char* const columns[] = {"id", "hash", "name", "arch", "run_id", "candidate_hash", "attempt_id",
                                        "config", "decision_id"};
  std::vector<std::string> out;
  for (const char* c : columns)
    if (IsKeyField({table, c})) out.push_back(c);
  return out;
}

}  // namespace forgek::store_detail
