// Forgetting knowledge: a decision, an operator's observations and evidence, a mechanism, or a seal.
#include <set>

#include "forgek/knowledge/store_io.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

namespace {

bool Delete(sqlite3* db, const std::string& table, const std::string& where, const std::vector<std::string>& args,
            std::map<std::string, int>* removed, std::string* err) {
  sql::Stmt s(db, ("DELETE FROM " + table + " WHERE " + where).c_str());
  for (size_t i = 0; i < args.size(); ++i) s.Bind(static_cast<int>(i + 1), args[i]);
  if (!s.Run(err)) return false;
  (*removed)[table] += sqlite3_changes(db);
  return true;
}

bool Collect(sqlite3* db, const std::string& text, const std::vector<std::string>& args, std::set<std::string>* out,
             std::string* err) {
  sql::Stmt s(db, text.c_str());
  for (size_t i = 0; i < args.size(); ++i) s.Bind(static_cast<int>(i + 1), args[i]);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->insert(s.Text(0));
  }
}

// Removes seal `prefix` (an id or a unique prefix of one). Its children take its parent, so that a
// lineage stays connected around the removed seal.
bool ForgetSeal(sqlite3* db, const std::string& prefix, std::map<std::string, int>* removed, std::string* err) {
  std::set<std::string> ids;
  if (!Collect(db, "SELECT id FROM seals WHERE substr(id, 1, length(?1)) = ?1", {prefix}, &ids, err)) return false;
  if (ids.empty()) {
    *err = "no seal with id " + prefix;
    return false;
  }
  if (ids.size() > 1 && !ids.count(prefix)) {
    *err = "seal id prefix " + prefix + " is ambiguous (" + std::to_string(ids.size()) + " seals)";
    return false;
  }
  std::string id = ids.count(prefix) ? prefix : *ids.begin();
  sql::Stmt reparent(db, "UPDATE seals SET parent = (SELECT parent FROM seals WHERE id = ?1) WHERE parent = ?1");
  reparent.Bind(1, id);
  // Its nightly history goes with it.
  return reparent.Run(err) && Delete(db, "seal_checks", "seal_id = ?1", {id}, removed, err) &&
         Delete(db, "seals", "id = ?1", {id}, removed, err);
}

}  // namespace

bool Forget(Store& store, const ForgetQuery& q, std::map<std::string, int>* removed, std::string* err) {
  int set = !q.decision.empty() + !q.operator_name.empty() + !q.mechanism.empty() + !q.seal.empty();
  if (set != 1) {
    if (err) *err = "forget needs exactly one of a decision id, an operator, a mechanism or a seal id";
    return false;
  }
  std::map<std::string, int> local;
  std::map<std::string, int>& rm = removed ? *removed : local;
  rm.clear();
  sqlite3* db = store.handle();
  return store.Transaction(
      [&](std::string* e) {
        if (!q.seal.empty()) return ForgetSeal(db, q.seal, &rm, e);
        if (!q.decision.empty()) {
          DecisionRecord d;
          bool found = false;
          if (!store.GetDecision(q.decision, &d, nullptr, &found, e)) return false;
          if (!found) {
            *e = "no decision with id " + q.decision;
            return false;
          }
          return Delete(db, "evidence", "decision_id = ?1", {d.id}, &rm, e) &&
                 Delete(db, "decisions", "id = ?1", {d.id}, &rm, e);
        }
        if (!q.mechanism.empty()) {
          std::set<std::string> ids;
          if (!Collect(db, "SELECT id FROM decisions WHERE mechanism = ?1 AND (?2 = '' OR arch = ?2)",
                       {q.mechanism, q.arch}, &ids, e))
            return false;
          for (const auto& id : ids)
            if (!Delete(db, "evidence", "decision_id = ?1", {id}, &rm, e) ||
                !Delete(db, "decisions", "id = ?1", {id}, &rm, e))
              return false;
          return true;
        }
        // An operator: its observations and profiles, and the evidence it contributed.
        std::vector<std::string> args = {q.operator_name, q.arch};
        std::set<std::string> touched;
        if (!Collect(db,
                     "SELECT DISTINCT e.decision_id FROM evidence e JOIN decisions d ON d.id = e.decision_id "
                     "WHERE e.operator_name = ?1 AND (?2 = '' OR d.arch = ?2)",
                     args, &touched, e))
          return false;
        if (!Delete(db, "observations", "operator_name = ?1 AND (?2 = '' OR arch = ?2)", args, &rm, e) ||
            !Delete(db, "profiles", "operator_name = ?1 AND (?2 = '' OR arch = ?2)", args, &rm, e) ||
            !Delete(db, "evidence",
                    "operator_name = ?1 AND decision_id IN (SELECT id FROM decisions WHERE ?2 = '' OR arch = ?2)",
                    args, &rm, e))
          return false;
        for (const auto& id : touched) {
          bool dropped = false;
          if (!store_detail::RederiveOrDrop(store, id, &dropped, e)) return false;
          rm["decisions"] += dropped ? 1 : 0;
        }
        return true;
      },
      err);
}

}  // namespace forgek
