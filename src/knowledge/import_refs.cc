// References between imported rows that the schema does not enforce: seals name a candidate, a parent seal and a run.
#include <set>

#include "knowledge/import_check.h"
#include "knowledge/sql.h"

namespace forgek::store_detail {
namespace {

using nlohmann::json;

// Whether `table` holds a row whose `column` is `value`.
bool Holds(sqlite3* db, const char* table, const char* column, const std::string& value, bool* found,
           std::string* err) {
  sql::Stmt s(db, (std::string("SELECT 1 FROM ") + table + " WHERE " + column + " = ?1 LIMIT 1").c_str());
  s.Bind(1, value);
  return s.Step(found, err);
}

// The parent of seal `id` in the store ("" when it has none or is absent).
bool ParentOf(sqlite3* db, const std::string& id, std::string* parent, std::string* err) {
  sql::Stmt s(db, "SELECT parent FROM seals WHERE id = ?1");
  s.Bind(1, id);
  bool row = false;
  if (!s.Step(&row, err)) return false;
  *parent = row ? s.Text(0) : std::string();
  return true;
}

std::string Text(const json& row, const char* field) {
  auto it = row.find(field);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct Reference {
  const char* table;   // the referring rows
  const char* field;   // their referring column ("" values refer to nothing)
  const char* target;  // the table referred to
  const char* column;  // its key
  const char* what;    // the target row in words
};
constexpr Reference kReferences[] = {
    {"seals", "candidate_hash", "candidates", "hash", "candidate"},
    {"seals", "parent", "seals", "id", "seal"},
    {"seals", "run_id", "runs", "id", "run"},
    {"exchanges", "run_id", "runs", "id", "run"},
};

}  // namespace

bool CheckImportReferences(sqlite3* db, const json& doc, std::string* err) {
  for (const Reference& ref : kReferences) {
    if (!doc.contains(ref.table) || !doc[ref.table].is_array()) continue;
    const json& rows = doc[ref.table];
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string value = Text(rows[i], ref.field);
      if (value.empty()) continue;
      bool found = false;
      if (!Holds(db, ref.target, ref.column, value, &found, err)) return false;
      if (!found) {
        *err = std::string(ref.table) + "[" + std::to_string(i) + "]." + ref.field + ": names " + ref.what + " \"" +
               value.substr(0, 64) + "\", which is neither in the file nor in the store";
        return false;
      }
    }
  }
  // Parent chains end: each seal of the file is followed up its parents, in the store as it now is.
  if (doc.contains("seals") && doc["seals"].is_array()) {
    const json& seals = doc["seals"];
    for (size_t i = 0; i < seals.size(); ++i) {
      std::string start = Text(seals[i], "id");
      std::set<std::string> seen = {start};
      std::string at = start;
      for (;;) {
        std::string parent;
        if (!ParentOf(db, at, &parent, err)) return false;
        if (parent.empty()) break;
        if (!seen.insert(parent).second) {
          *err = "seals[" + std::to_string(i) + "].parent: the parent chain of seal \"" + start.substr(0, 64) +
                 "\" loops (it returns to \"" + parent.substr(0, 64) + "\")";
          return false;
        }
        at = parent;
      }
    }
  }
  return true;
}

}  // namespace forgek::store_detail
