// Schema migrations of the knowledge store. Append new versions; never edit a shipped one.
#include "schema.h"

#include <string>
#include <vector>

#include "sql.h"

namespace forgek::schema {
namespace {

// Migration N (1-based) takes a store from version N-1 to N.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> m = {
      // 1: every entity.
      R"sql(
CREATE TABLE devices (
  name TEXT NOT NULL, arch TEXT NOT NULL, sm_count INTEGER NOT NULL DEFAULT 0,
  l2_bytes INTEGER NOT NULL DEFAULT 0, memory_bytes INTEGER NOT NULL DEFAULT 0, driver TEXT NOT NULL DEFAULT '',
  peaks_json TEXT NOT NULL DEFAULT '{}', calibrated INTEGER NOT NULL DEFAULT 0, calibrated_at TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (name, arch));
CREATE TABLE operators (
  name TEXT PRIMARY KEY, category TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '');
CREATE TABLE runs (
  id TEXT PRIMARY KEY, operator_name TEXT NOT NULL, arch TEXT NOT NULL, device TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT '', incumbent TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
  summary_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '');
CREATE TABLE candidates (
  hash TEXT PRIMARY KEY, operator_name TEXT NOT NULL, source TEXT NOT NULL, params_json TEXT NOT NULL DEFAULT '{}',
  family TEXT NOT NULL DEFAULT '', mechanisms_json TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL);
CREATE TABLE attempts (
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, iteration INTEGER NOT NULL,
  candidate_hash TEXT NOT NULL REFERENCES candidates(hash), outcome TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
  rationale TEXT NOT NULL DEFAULT '', geomean_speedup REAL NOT NULL DEFAULT 0, wall_s REAL NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL);
CREATE TABLE attempt_measurements (
  attempt_id TEXT NOT NULL REFERENCES attempts(id) ON DELETE CASCADE, config TEXT NOT NULL,
  correct INTEGER NOT NULL, rel_l2 REAL NOT NULL, max_abs REAL NOT NULL, candidate_us REAL NOT NULL,
  incumbent_us REAL NOT NULL, rel_noise REAL NOT NULL, speedup REAL NOT NULL, sol_pct REAL NOT NULL,
  PRIMARY KEY (attempt_id, config));
CREATE TABLE profiles (
  id TEXT PRIMARY KEY, operator_name TEXT NOT NULL, arch TEXT NOT NULL, subject TEXT NOT NULL,
  config TEXT NOT NULL, profile_json TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE observations (
  id TEXT PRIMARY KEY, operator_name TEXT NOT NULL, arch TEXT NOT NULL, subject TEXT NOT NULL, config TEXT NOT NULL,
  kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, number REAL NOT NULL DEFAULT 0,
  mechanism TEXT NOT NULL DEFAULT '', evidence TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE mechanisms (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, archs_json TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE decisions (
  id TEXT PRIMARY KEY, arch TEXT NOT NULL, category TEXT NOT NULL, regime TEXT NOT NULL, mechanism TEXT NOT NULL,
  settings_json TEXT NOT NULL DEFAULT '{}', verdict TEXT NOT NULL, effect REAL NOT NULL, confidence REAL NOT NULL,
  supporting INTEGER NOT NULL, contradicting INTEGER NOT NULL, text TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  UNIQUE (arch, category, regime, mechanism));
CREATE TABLE evidence (
  id TEXT PRIMARY KEY, decision_id TEXT NOT NULL REFERENCES decisions(id) ON DELETE CASCADE, kind TEXT NOT NULL,
  source TEXT NOT NULL, operator_name TEXT NOT NULL DEFAULT '', config TEXT NOT NULL DEFAULT '',
  candidate_hash TEXT NOT NULL DEFAULT '', settings_json TEXT NOT NULL DEFAULT '{}', supports INTEGER NOT NULL,
  speedup REAL NOT NULL DEFAULT 0, metric_deltas_json TEXT NOT NULL DEFAULT '{}', device TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL);
CREATE TABLE seals (
  id TEXT PRIMARY KEY, operator_name TEXT NOT NULL, arch TEXT NOT NULL, candidate_hash TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}', parent TEXT NOT NULL DEFAULT '', run_id TEXT NOT NULL DEFAULT '',
  cubin_sha256 TEXT NOT NULL DEFAULT '', toolchain TEXT NOT NULL DEFAULT '', driver TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '', config_us_json TEXT NOT NULL DEFAULT '{}', geomean_speedup REAL NOT NULL DEFAULT 0,
  metadata_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
CREATE TABLE exchanges (
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL DEFAULT '', iteration INTEGER NOT NULL DEFAULT 0,
  turn INTEGER NOT NULL DEFAULT 0, provider TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
  request_json TEXT NOT NULL DEFAULT '', response_json TEXT NOT NULL DEFAULT '', http_status INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0, latency_s REAL NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL);
)sql",
      // 2: indexes for the queries agents and the CLI make on every run.
      R"sql(
CREATE INDEX observations_by_scope ON observations (operator_name, arch, subject);
CREATE INDEX decisions_by_scope ON decisions (arch, category, regime);
CREATE INDEX evidence_by_decision ON evidence (decision_id);
CREATE INDEX attempts_by_run ON attempts (run_id, iteration);
CREATE INDEX seals_by_operator ON seals (operator_name, arch, created_at);
CREATE INDEX exchanges_by_run ON exchanges (run_id, iteration, turn);
)sql",
      // 3: compile-only attempts were stored as `slower`; they were never timed.
      R"sql(
UPDATE attempts SET outcome = 'compiled' WHERE outcome = 'slower' AND detail LIKE 'compiled, not evaluated%';
)sql",
      // 4: a decision is (arch, category, regime, mechanism, setting) and rests on controlled comparisons.
      // Evidence of kind 'attempt' (an attempt's speedup over the incumbent credited to every mechanism it
      // claimed) isolated nothing: it is dropped. Decisions left with only expert observations become
      // hypotheses on the whole mechanism; decisions left with nothing are dropped. The tables are rebuilt
      // (evidence first, so that dropping the old decisions cascades into nothing); attempts, candidates,
      // observations and seals are untouched, and runs re-derive comparisons from new attempts.
      // Imports and `knowledge forget` apply the same rule to the decisions they change, at the schema of
      // the day (store_detail::RederiveOrDrop): no evidence left, no decision; observations alone, a hypothesis.
      R"sql(
CREATE TABLE decisions_v4 (
  id TEXT PRIMARY KEY, arch TEXT NOT NULL, category TEXT NOT NULL, regime TEXT NOT NULL, mechanism TEXT NOT NULL,
  setting TEXT NOT NULL DEFAULT '', settings_json TEXT NOT NULL DEFAULT '{}', verdict TEXT NOT NULL,
  effect REAL NOT NULL, effect_lo REAL NOT NULL DEFAULT 1, effect_hi REAL NOT NULL DEFAULT 1,
  comparisons INTEGER NOT NULL DEFAULT 0, operators_json TEXT NOT NULL DEFAULT '[]', confidence REAL NOT NULL,
  supporting INTEGER NOT NULL, contradicting INTEGER NOT NULL, text TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  UNIQUE (arch, category, regime, mechanism, setting));
CREATE TABLE evidence_v4 (
  id TEXT PRIMARY KEY, decision_id TEXT NOT NULL REFERENCES decisions_v4(id) ON DELETE CASCADE, kind TEXT NOT NULL,
  source TEXT NOT NULL, operator_name TEXT NOT NULL DEFAULT '', config TEXT NOT NULL DEFAULT '',
  candidate_hash TEXT NOT NULL DEFAULT '', settings_json TEXT NOT NULL DEFAULT '{}', supports INTEGER NOT NULL,
  speedup REAL NOT NULL DEFAULT 0, noise REAL NOT NULL DEFAULT 0, detail_json TEXT NOT NULL DEFAULT '{}',
  metric_deltas_json TEXT NOT NULL DEFAULT '{}', device TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
INSERT INTO decisions_v4 (id, arch, category, regime, mechanism, setting, settings_json, verdict, effect, operators_json,
                          confidence, supporting, contradicting, text, created_at, updated_at)
  SELECT d.id, d.arch, d.category, d.regime, d.mechanism, '', '{}', 'hypothesis', 1.0,
         (SELECT json_group_array(DISTINCT e.operator_name) FROM evidence e
            WHERE e.decision_id = d.id AND e.kind = 'observation' AND e.operator_name <> ''),
         0, (SELECT count(*) FROM evidence e WHERE e.decision_id = d.id AND e.kind = 'observation'), 0,
         d.mechanism || ' for ' || d.category || ' on ' || d.arch || ' (' || d.regime ||
           ' shapes): seen in an expert kernel, untested here',
         d.created_at, d.updated_at
  FROM decisions d WHERE EXISTS (SELECT 1 FROM evidence e WHERE e.decision_id = d.id AND e.kind = 'observation');
INSERT INTO evidence_v4 (id, decision_id, kind, source, operator_name, config, candidate_hash, settings_json, supports,
                         speedup, metric_deltas_json, device, created_at)
  SELECT id, decision_id, kind, source, operator_name, config, candidate_hash, settings_json, supports, 0,
         metric_deltas_json, device, created_at
  FROM evidence WHERE kind = 'observation' AND decision_id IN (SELECT id FROM decisions_v4);
DROP TABLE evidence;
DROP TABLE decisions;
ALTER TABLE decisions_v4 RENAME TO decisions;
ALTER TABLE evidence_v4 RENAME TO evidence;
CREATE INDEX decisions_by_scope ON decisions (arch, category, regime);
CREATE INDEX evidence_by_decision ON evidence (decision_id);
)sql",
      // 5: the nightly history of `forgek regress`, one row per config of a seal re-checked (config ''
      // for a row about the whole seal). No foreign key: a row may name an operator without a seal.
      R"sql(
CREATE TABLE seal_checks (
  check_id TEXT NOT NULL, seal_id TEXT NOT NULL DEFAULT '', operator_name TEXT NOT NULL,
  arch TEXT NOT NULL DEFAULT '', device TEXT NOT NULL DEFAULT '', driver TEXT NOT NULL DEFAULT '',
  toolchain TEXT NOT NULL DEFAULT '', config TEXT NOT NULL DEFAULT '', result TEXT NOT NULL,
  now_us REAL NOT NULL DEFAULT 0, expert_us REAL NOT NULL DEFAULT 0, sealed_us REAL NOT NULL DEFAULT 0,
  speedup REAL NOT NULL DEFAULT 0, noise REAL NOT NULL DEFAULT 0, message TEXT NOT NULL DEFAULT '',
  checked_at TEXT NOT NULL);
CREATE INDEX seal_checks_by_seal ON seal_checks (seal_id, checked_at);
CREATE INDEX seal_checks_by_operator ON seal_checks (operator_name, checked_at);
)sql",
      // 6: seals keep their binaries: every sealed cubin by its SHA-256, so that export, verify and
      // diff need no rebuild. A seal written before has none: its first export or verify rebuilds it,
      // keeps it only when it hashes to the sealed cubin, and flags it `rebuilt`.
      R"sql(
CREATE TABLE cubins (
  sha256 TEXT PRIMARY KEY, bytes BLOB NOT NULL, toolchain TEXT NOT NULL DEFAULT '',
  rebuilt INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
)sql",
  };
  return m;
}

bool UserVersion(sqlite3* db, int* v, std::string* err) {
  sql::Stmt s(db, "PRAGMA user_version");
  bool row = false;
  if (!s.Step(&row, err)) return false;
  *v = row ? static_cast<int>(s.Int(0)) : 0;
  return true;
}

}  // namespace

int LatestVersion() { return static_cast<int>(Migrations().size()); }

bool MigrateTo(sqlite3* db, int target, std::string* err) {
  for (;;) {
    // BEGIN IMMEDIATE: two processes opening a new store at once must not both migrate it.
    if (!sql::Exec(db, "BEGIN IMMEDIATE", err)) return false;
    int version = 0;
    if (!UserVersion(db, &version, err)) {
      sql::Exec(db, "ROLLBACK", nullptr);
      return false;
    }
    if (version >= target) return sql::Exec(db, "COMMIT", err);
    // Migration `version` takes the file to version+1; a version outside the list names none (Store::Open
    // refuses such files first, this keeps any other caller from reading past the list).
    if (version < 0 || version >= LatestVersion()) {
      sql::Exec(db, "ROLLBACK", nullptr);
      if (err) *err = "schema version " + std::to_string(version) + " is not one forgek knows (1 to " +
                      std::to_string(LatestVersion()) + ")";
      return false;
    }
    std::string step = Migrations()[static_cast<size_t>(version)];
    step += "PRAGMA user_version = " + std::to_string(version + 1) + ";";
    if (version == 0) step += "PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
    std::string why;
    if (!sql::Exec(db, step, &why) || !sql::Exec(db, "COMMIT", &why)) {
      sql::Exec(db, "ROLLBACK", nullptr);
      if (err) *err = "migrating the store to schema " + std::to_string(version + 1) + " failed: " + why;
      return false;
    }
  }
}

}  // namespace forgek::schema
