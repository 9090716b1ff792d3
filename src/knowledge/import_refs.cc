// References between imported rows that the schema does not enforce: seals name a candidate (and, for
// a dispatch seal, the candidates of its table), a parent seal and a run.
#include <set>

#include "forgek/core/json_parse.h"
#include "import_check.h"
#include "sql.h"

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

// The kernels of a dispatch seal's table (`metadata.dispatch`, docs/seal-format.md) as the run loads
// them (seal/incumbent.cc): each a stored candidate with its params, or the expert reference, and
// every table row a config with the index of its kernel. A kernel the store lacks would make the seal
// one no run can load, so each candidate must be in the file or the store. `where` is
// "seals[i].metadata_json".
bool CheckDispatch(sqlite3* db, const std::string& where, const json& row, std::string* err) {
  auto fail = [&](const std::string& at, const std::string& why) {
    *err = where + ": " + at + ": " + why;
    return false;
  };
  std::string text = Text(row, "metadata_json");
  if (text.empty()) return true;
  json meta = ParseJsonLenient(text);  // its limits and kind were checked with the row
  if (!meta.is_object() || !meta.contains("dispatch")) return true;
  const json& d = meta["dispatch"];
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array())
    return fail("dispatch", "expected an object with arrays \"kernels\" and \"table\"");
  const json& kernels = d["kernels"];
  for (size_t k = 0; k < kernels.size(); ++k) {
    const json& kernel = kernels[k];
    const std::string at = "dispatch.kernels[" + std::to_string(k) + "]";
    if (kernel.is_object() && kernel.contains("reference")) continue;
    if (!kernel.is_object() || !kernel.contains("candidate") || !kernel["candidate"].is_string() ||
        kernel["candidate"].get<std::string>().empty() || !kernel.contains("params") || !kernel["params"].is_object())
      return fail(at, "needs \"candidate\" (a hash) and \"params\" (an object), or \"reference\"");
    const std::string hash = kernel["candidate"].get<std::string>();
    bool found = false;
    if (!Holds(db, "candidates", "hash", hash, &found, err)) return false;
    if (!found)
      return fail(at + ".candidate",
                  "names candidate \"" + hash.substr(0, 64) + "\", which is neither in the file nor in the store");
  }
  const json& table = d["table"];
  for (size_t i = 0; i < table.size(); ++i) {
    const json& r = table[i];
    if (!r.is_object() || !r.contains("config") || !r["config"].is_string() || !r.contains("kernel") ||
        !r["kernel"].is_number_unsigned() || r["kernel"].get<size_t>() >= kernels.size())
      return fail("dispatch.table[" + std::to_string(i) + "]",
                  "needs \"config\" (a name) and \"kernel\" (an index into kernels)");
  }
  return true;
}

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
  // The candidates of a dispatch seal's table, like its own candidate.
  if (doc.contains("seals") && doc["seals"].is_array()) {
    const json& seals = doc["seals"];
    for (size_t i = 0; i < seals.size(); ++i)
      if (!CheckDispatch(db, "seals[" + std::to_string(i) + "].metadata_json", seals[i], err)) return false;
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
