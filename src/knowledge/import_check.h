// Validation of a knowledge import: type, range and enumeration of every field, and the references between rows.
#pragma once

#include <string>
#include <vector>

#include <sqlite3.h>

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
// Key columns (ids, hashes, the ids a row refers to) take only non-empty strings, times only
// ISO-8601 as the store writes them, text no NUL, ESC or other control character but tab and newline.
bool CheckImportValue(const std::string& table, const ColumnInfo& column, const nlohmann::json& value,
                      std::string* err);

// The key columns of `table` that every imported row must carry (a missing one would be stored null).
std::vector<std::string> RequiredImportKeys(const std::string& table);

// The references the schema leaves unenforced, checked once the rows of `doc` are in the store
// (inside the import's transaction, so "in the store" means "in the file or already held"): a
// seal's candidate, the candidates of its dispatch table (metadata_json's `dispatch`, which must
// have the shape docs/seal-format.md gives), its parent seal and run, an exchange's run; and seal
// parents form no cycle. False with `err` naming table[i].field.
bool CheckImportReferences(sqlite3* db, const nlohmann::json& doc, std::string* err);

}  // namespace forgek::store_detail
