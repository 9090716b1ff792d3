// JSON export and import of a whole store, and merging another store file.
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"
#include "forgek/knowledge/store_io.h"
#include "import_check.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "forgek-knowledge";

// Tables in an order that satisfies their foreign keys, with the key that orders their rows.
struct TableSpec {
  const char* name;
  const char* order;
};
constexpr TableSpec kTables[] = {
    {"devices", "name, arch"},         {"operators", "name"},   {"mechanisms", "id"},
    {"runs", "id"},                    {"candidates", "hash"},  {"attempts", "id"},
    {"attempt_measurements", "attempt_id, config"}, {"profiles", "id"}, {"observations", "id"},
    {"decisions", "id"},               {"evidence", "id"},      {"seals", "id"},
    {"exchanges", "id"},
};

bool Columns(sqlite3* db, const std::string& table, std::map<std::string, store_detail::ColumnInfo>* cols,
             std::string* err) {
  sql::Stmt s(db, ("PRAGMA table_info(" + table + ")").c_str());
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    (*cols)[s.Text(1)] = {s.Text(1), s.Text(2), s.Int(3) != 0};
  }
}

}  // namespace

bool ExportStore(Store& store, std::string* json_text, std::string* err) {
  json doc = json::object();
  doc["format"] = kFormat;
  doc["schema"] = store.SchemaVersion();
  for (const auto& t : kTables) {
    json rows = json::array();
    // The run's profile cache is this machine's own measurement: another store re-measures.
    const std::string where =
        std::string(t.name) == "profiles" ? " WHERE subject NOT LIKE '" + std::string(kProfileCachePrefix) + "%'" : "";
    sql::Stmt s(store.handle(),
                (std::string("SELECT * FROM ") + t.name + where + " ORDER BY " + t.order).c_str());
    for (bool row = true;;) {
      if (!s.Step(&row, err)) return false;
      if (!row) break;
      json r = json::object();
      for (int c = 0; c < s.ColumnCount(); ++c) {
        switch (s.ColumnType(c)) {
          case SQLITE_INTEGER: r[s.ColumnName(c)] = s.Int(c); break;
          case SQLITE_FLOAT: r[s.ColumnName(c)] = s.Real(c); break;
          case SQLITE_NULL: r[s.ColumnName(c)] = nullptr; break;
          default: r[s.ColumnName(c)] = s.Text(c); break;
        }
      }
      rows.push_back(std::move(r));
    }
    doc[t.name] = std::move(rows);
  }
  // Rows stored before provider text was made valid UTF-8 (a Latin-1 error page in `exchanges`) may
  // hold other bytes: they are exported as U+FFFD instead of failing the whole export.
  *json_text = doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  return true;
}

bool ImportStore(Store& store, const std::string& json_text, const std::string& origin, ImportStats* stats,
                 std::string* err) {
  ImportStats local;
  ImportStats& st = stats ? *stats : local;
  st = ImportStats{};
  auto fail = [&](const std::string& field, const std::string& why) {
    if (err) *err = origin + ": " + (field.empty() ? "" : field + ": ") + why;
    return false;
  };
  json doc;
  JsonParseError parse_error;
  if (!ParseJsonLimited(json_text, &doc, &parse_error))
    return fail("", parse_error.message + " (at byte " + std::to_string(parse_error.offset) +
                        "); nothing was imported");
  if (!doc.is_object()) return fail("", "not a JSON object");
  if (!doc.contains("format") || !doc["format"].is_string() || doc["format"].get<std::string>() != kFormat)
    return fail("format", std::string("expected \"") + kFormat + "\"");
  if (!doc.contains("schema") || !doc["schema"].is_number_integer()) return fail("schema", "expected an integer");
  if (doc["schema"].get<int64_t>() < 1)
    return fail("schema", "expected a schema number >= 1, got " + doc["schema"].dump());
  if (doc["schema"].get<int64_t>() > Store::CurrentSchemaVersion())
    return fail("schema", "written by a newer forgek (schema " + std::to_string(doc["schema"].get<int64_t>()) +
                              " > " + std::to_string(Store::CurrentSchemaVersion()) + ")");
  std::set<std::string> known;
  for (const auto& t : kTables) known.insert(t.name);
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "format" && it.key() != "schema" && !known.count(it.key()))
      return fail(it.key(), "unknown table");

  std::set<std::string> touched_decisions;
  const json interrupted = "interrupted";
  std::string inner;
  bool ok = store.Transaction(
      [&](std::string* e) {
        for (const auto& t : kTables) {
          if (!doc.contains(t.name)) continue;
          const json& rows = doc[t.name];
          if (!rows.is_array()) {
            *e = std::string(t.name) + ": expected an array of rows";
            return false;
          }
          std::map<std::string, store_detail::ColumnInfo> cols;
          if (!Columns(store.handle(), t.name, &cols, e)) return false;
          for (size_t i = 0; i < rows.size(); ++i) {
            std::string where = std::string(t.name) + "[" + std::to_string(i) + "]";
            const json& r = rows[i];
            if (!r.is_object()) {
              *e = where + ": expected an object";
              return false;
            }
            std::string names, marks;
            std::vector<const json*> values;
            // Evidence of kind "attempt" (an attempt's speedup credited to every mechanism it
            // claimed) came from uncontrolled comparisons; stores dropped it at schema 4, and an
            // export written before that keeps none of it either (docs/KNOWLEDGE.md).
            if (std::string(t.name) == "evidence" && r.contains("kind") && r["kind"] == "attempt") {
              ++st.left_out;
              continue;
            }
            // A profile cache row would let a file stand in for a measurement this store never made.
            if (std::string(t.name) == "profiles" && r.contains("subject") && r["subject"].is_string() &&
                r["subject"].get<std::string>().rfind(kProfileCachePrefix, 0) == 0) {
              ++st.cached_profiles_left_out;
              continue;
            }
            for (auto c = r.begin(); c != r.end(); ++c) {
              auto col = cols.find(c.key());
              if (col == cols.end()) {
                *e = where + "." + c.key() + ": unknown field";
                return false;
              }
              std::string why;
              if (!store_detail::CheckImportValue(t.name, col->second, *c, &why)) {
                *e = where + "." + c.key() + ": " + why;
                return false;
              }
              // A run still running where it was exported is not running here: it would show
              // as running for good. It is kept as interrupted.
              if (std::string(t.name) == "runs" && c.key() == "status" && *c == "running") {
                values.push_back(&interrupted);
                names += (names.empty() ? "" : ", ") + c.key();
                marks += marks.empty() ? "?" : ", ?";
                continue;
              }
              names += (names.empty() ? "" : ", ") + c.key();
              marks += marks.empty() ? "?" : ", ?";
              values.push_back(&*c);
            }
            for (const std::string& key : store_detail::RequiredImportKeys(t.name))
              if (!r.contains(key)) {
                *e = where + "." + key + ": missing (a row needs its key)";
                return false;
              }
            sql::Stmt s(store.handle(),
                        ("INSERT OR IGNORE INTO " + std::string(t.name) + " (" + names + ") VALUES (" + marks + ")")
                            .c_str());
            for (size_t v = 0; v < values.size(); ++v) {
              const json& x = *values[v];
              int idx = static_cast<int>(v + 1);
              if (x.is_null())
                s.BindNull(idx);
              else if (x.is_boolean())
                s.Bind(idx, static_cast<int64_t>(x.get<bool>()));
              else if (x.is_number_integer())
                s.Bind(idx, x.get<int64_t>());
              else if (x.is_number())
                s.Bind(idx, x.get<double>());
              else
                s.Bind(idx, x.get<std::string>());
            }
            if (!s.Run(e)) {
              *e = where + ": " + *e;
              return false;
            }
            bool added = sqlite3_changes(store.handle()) > 0;
            (added ? st.added : st.present)[t.name] += 1;
            if (added && std::string(t.name) == "evidence" && r.contains("decision_id") && r["decision_id"].is_string())
              touched_decisions.insert(r["decision_id"].get<std::string>());
            // A decision row comes with the verdict, effect and confidence its exporter derived,
            // perhaps from evidence left out above: it is re-derived from what arrives with it.
            if (added && std::string(t.name) == "decisions" && r.contains("id") && r["id"].is_string())
              touched_decisions.insert(r["id"].get<std::string>());
          }
        }
        if (!store_detail::CheckImportReferences(store.handle(), doc, e)) return false;
        // Every decision the file added or gave evidence is derived again from the evidence the store
        // now holds for it, and one left with none (it rested on `attempt` evidence alone) is dropped:
        // schema migration 4's rule, so that an import keeps no verdict that nothing measured.
        for (const auto& id : touched_decisions) {
          bool dropped = false;
          if (!store_detail::RederiveOrDrop(store, id, &dropped, e)) return false;
          if (!dropped) {
            ++st.decisions_updated;
            continue;
          }
          ++st.decisions_dropped;
          if (--st.added["decisions"] <= 0) st.added.erase("decisions");
        }
        return true;
      },
      &inner);
  if (!ok) return fail("", inner + "; nothing was imported");
  return true;
}

bool MergeStore(Store& store, const std::string& other_path, ImportStats* stats, std::string* err) {
  Store other;
  if (!other.Open(other_path, err, StoreMode::read_only)) return false;
  std::string text;
  if (!ExportStore(other, &text, err)) return false;
  if (!ImportStore(store, text, other_path, stats, err)) return false;
  // The sealed binaries come along (an export leaves them out: it is text), so that the merged
  // seals export and verify without a rebuild. Each is checked against its hash as it is added.
  ImportStats local;
  if (!stats) stats = &local;
  std::string why;
  const bool copied = store.Transaction(
      [&](std::string* e) {
        sql::Stmt s(other.handle(), "SELECT sha256, bytes, toolchain, rebuilt FROM cubins ORDER BY sha256");
        for (bool row = true;;) {
          if (!s.Step(&row, e)) return false;
          if (!row) return true;
          // Present already: counted, not read (PutCubin checks what it adds against its hash).
          sql::Stmt has(store.handle(), "SELECT 1 FROM cubins WHERE sha256 = ?");
          has.Bind(1, s.Text(0));
          bool found = false;
          if (!has.Step(&found, e)) return false;
          if (found) {
            ++stats->present["cubins"];
            continue;
          }
          if (!store.PutCubin(s.Text(0), s.Blob(1), s.Text(2), s.Int(3) != 0, e)) return false;
          ++stats->added["cubins"];
        }
      },
      &why);
  if (!copied) {
    *err = "merged " + other_path + ", but its sealed binaries were not copied (" + why +
           "): its seals export and verify by rebuilding them";
    return false;
  }
  return true;
}

}  // namespace forgek
