// Validation of one row of a knowledge import: type, range and enumeration of every field.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace forgek::store_detail {

// The declared shape of a store column, as PRAGMA table_info reports it.
struct ColumnInfo {
  std::string name;
  std::string type;  // INTEGER | REAL | TEXT
  bool not_null = false;
};

// Whether `value` may be stored in `column` of `table`: the declared type, the ranges and
// enumerations the store relies on (a verdict is hypothesis|validated|refuted, a confidence is in
// 0..1, a count fits an int), and JSON text columns holding JSON of the right kind. False with
// `err` saying what was expected and what came (never the whole value).
bool CheckImportValue(const std::string& table, const ColumnInfo& column, const nlohmann::json& value,
                      std::string* err);

}  // namespace forgek::store_detail
