// Migrations, and refusing newer, foreign and corrupt files without touching them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "forgek/knowledge/store.h"
#include "knowledge/schema.h"
#include "knowledge/sql.h"
#include "test_util.h"

namespace forgek {
namespace {

void RawExec(const std::string& path, const std::string& sql_text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string err;
  EXPECT_TRUE(sql::Exec(db, sql_text, &err)) << err;
  sqlite3_close(db);
}

TEST(Schema, MigratesAVersionOneStoreKeepingItsRows) {
  TempDir dir;
  std::string path = dir.file("old.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string err;
    ASSERT_TRUE(schema::MigrateTo(db, 1, &err)) << err;
    ASSERT_TRUE(sql::Exec(db, "INSERT INTO operators VALUES ('gemm_bf16', 'gemm', 'old row')", &err)) << err;
    sqlite3_close(db);
  }
  Store store;
  std::string err;
  EXPECT_FALSE(store.Open(path, &err, StoreMode::read_only));  // read-only never migrates
  EXPECT_NE(err.find("schema version 1"), std::string::npos) << err;
  ASSERT_TRUE(store.Open(path, &err, StoreMode::existing)) << err;
  EXPECT_EQ(store.SchemaVersion(), Store::CurrentSchemaVersion());
  std::vector<OperatorRecord> ops;
  ASSERT_TRUE(store.ListOperators(&ops, &err));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].description, "old row");
  sql::Stmt idx(store.handle(), "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'decisions_by_scope'");
  bool row = false;
  ASSERT_TRUE(idx.Step(&row, &err));
  EXPECT_EQ(idx.Int(0), 1);  // migration 2 ran
}

// A store written before decisions rested on controlled comparisons (schema 3): every attempt's
// speedup was credited to every mechanism its candidate claimed. Opening it drops that evidence and
// the decisions it alone made; expert observations stay as hypotheses; attempts and seals stay.
TEST(Schema, MigrationFourDropsUncontrolledEvidenceAndKeepsAttemptsAndSeals) {
  TempDir dir;
  std::string path = dir.file("v3.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string err;
    ASSERT_TRUE(schema::MigrateTo(db, 3, &err)) << err;  // the schema-3 DDL, as shipped then
    const char* rows = R"sql(
PRAGMA foreign_keys = ON;
INSERT INTO operators VALUES ('gemm_bf16', 'gemm', '');
INSERT INTO runs (id, operator_name, arch, status, created_at) VALUES ('r1', 'gemm_bf16', 'sm90', 'finished', 't0');
INSERT INTO candidates (hash, operator_name, source, created_at) VALUES ('c1', 'gemm_bf16', 'src', 't0');
INSERT INTO attempts (id, run_id, iteration, candidate_hash, outcome, geomean_speedup, created_at)
  VALUES ('a1', 'r1', 0, 'c1', 'slower', 0.66, 't0');
INSERT INTO attempt_measurements VALUES ('a1', '8192^3', 1, 0.001, 0.1, 1500, 1000, 0.01, 0.66, 40);
INSERT INTO seals (id, operator_name, arch, candidate_hash, created_at) VALUES ('s1', 'gemm_bf16', 'sm90', 'c1', 't0');
INSERT INTO decisions VALUES ('d-wgmma', 'sm90', 'gemm', 'large', 'wgmma', '{"BM":64}', 'refuted', 0.66, 0.4, 1, 1,
  'wgmma {"BM":64,...} for gemm on sm90 (large shapes): hurts, 0.66x over 1 attempt(s)', 't0', 't1');
INSERT INTO decisions VALUES ('d-splitk', 'sm90', 'gemm', 'skinny', 'split_k', '{"SBN":64}', 'refuted', 0.8, 0.5, 0, 1,
  'split_k ...: hurts', 't0', 't1');
INSERT INTO evidence (id, decision_id, kind, source, operator_name, config, settings_json, supports, speedup, created_at)
  VALUES ('e-obs', 'd-wgmma', 'observation', 'reference of gemm_bf16/8192^3: name tile=320x128', 'gemm_bf16',
          '8192^3', '{"tile":"320x128"}', 1, 0, 't0');
INSERT INTO evidence (id, decision_id, kind, source, operator_name, candidate_hash, supports, speedup, created_at)
  VALUES ('e-att1', 'd-wgmma', 'attempt', 'attempt a1 of run r1', 'gemm_bf16', 'c1', 0, 0.66, 't1');
INSERT INTO evidence (id, decision_id, kind, source, operator_name, candidate_hash, supports, speedup, created_at)
  VALUES ('e-att2', 'd-splitk', 'attempt', 'attempt a1 of run r1', 'gemm_bf16', 'c1', 0, 0.8, 't1');
)sql";
    ASSERT_TRUE(sql::Exec(db, rows, &err)) << err;
    sqlite3_close(db);
  }
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(path, &err, StoreMode::existing)) << err;
  EXPECT_EQ(store.SchemaVersion(), Store::CurrentSchemaVersion());
  std::vector<DecisionRecord> ds;
  ASSERT_TRUE(store.ListDecisions({}, &ds, &err)) << err;
  ASSERT_EQ(ds.size(), 1u) << "the decision made by attempts alone is gone";
  EXPECT_EQ(ds[0].id, "d-wgmma");
  EXPECT_EQ(ds[0].scope.mechanism, "wgmma");
  EXPECT_EQ(ds[0].scope.setting, "");
  EXPECT_EQ(ds[0].verdict, DecisionVerdict::hypothesis) << "no longer refuted by a bad tile's attempt";
  EXPECT_EQ(ds[0].comparisons, 0);
  EXPECT_EQ(ds[0].operators, std::vector<std::string>{"gemm_bf16"});
  EXPECT_NE(ds[0].text.find("untested here"), std::string::npos) << ds[0].text;
  DecisionRecord d;
  std::vector<EvidenceRecord> ev;
  bool found = false;
  ASSERT_TRUE(store.GetDecision("d-wgmma", &d, &ev, &found, &err)) << err;
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "observation");
  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts("r1", &attempts, &err)) << err;
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].measurements.size(), 1u);
  SealRecord seal;
  ASSERT_TRUE(store.GetSeal("s1", &seal, &found, &err)) << err;
  EXPECT_TRUE(found);
  // The migrated store takes new evidence: a setting decision beside the whole-mechanism one.
  EvidenceRecord cmp;
  cmp.kind = "ablation";
  cmp.source = "ablation in run r2";
  cmp.operator_name = "gemm_bf16";
  cmp.speedup = 1.05;
  cmp.noise = 0.01;
  ASSERT_TRUE(store.AddEvidence({"sm90", "gemm", "large", "mbarrier_pipeline", "stages=4"}, cmp, &d, &err)) << err;
  EXPECT_EQ(d.verdict, DecisionVerdict::validated);
  ASSERT_TRUE(store.AddEvidence({"sm90", "gemm", "large", "mbarrier_pipeline", "stages=3"}, cmp, &d, &err)) << err;
  ASSERT_TRUE(store.ListDecisions({}, &ds, &err)) << err;
  EXPECT_EQ(ds.size(), 3u);
  sql::Stmt idx(store.handle(),
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('decisions_by_scope', "
                "'evidence_by_decision')");
  bool row = false;
  ASSERT_TRUE(idx.Step(&row, &err));
  EXPECT_EQ(idx.Int(0), 2);
}

TEST(Schema, RefusesANewerStore) {
  TempDir dir;
  std::string path = dir.file("new.db");
  {
    Store s;
    std::string err;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  RawExec(path, "PRAGMA user_version = 99");
  Store store;
  std::string err;
  EXPECT_FALSE(store.Open(path, &err));
  EXPECT_NE(err.find("schema version 99"), std::string::npos) << err;
  EXPECT_NE(err.find("newer"), std::string::npos) << err;
}

// A newer store is named newer by read-only commands too, not "open it for writing to migrate".
TEST(Schema, RefusesANewerStoreReadOnly) {
  TempDir dir;
  std::string path = dir.file("new.db"), err;
  {
    Store s;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  RawExec(path, "PRAGMA user_version = 99");
  Store store;
  EXPECT_FALSE(store.Open(path, &err, StoreMode::read_only));
  EXPECT_NE(err.find(path + " has schema version 99, newer than this forgek understands"), std::string::npos) << err;
  EXPECT_EQ(err.find("open it once for writing"), std::string::npos) << err;
}

// A negative user_version crashed every writing command (the migrations were indexed by it) and
// read-only commands advised opening the store for writing (issue 29, item 7).
TEST(Schema, RefusesANegativeVersionForReadingAndWriting) {
  TempDir dir;
  std::string path = dir.file("neg.db"), err;
  {
    Store s;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  for (int version : {-1, -2147483647 - 1}) {
    RawExec(path, "PRAGMA user_version = " + std::to_string(version));
    std::string before = ReadFile(path);
    for (StoreMode mode : {StoreMode::create, StoreMode::existing, StoreMode::read_only}) {
      Store store;
      EXPECT_FALSE(store.Open(path, &err, mode));
      EXPECT_NE(err.find("knowledge store " + path + " has schema version " + std::to_string(version)),
                std::string::npos)
          << err;
      EXPECT_NE(err.find("corrupt or not a forgek store"), std::string::npos) << err;
      EXPECT_EQ(err.find("open it once for writing"), std::string::npos) << err;
    }
    EXPECT_EQ(ReadFile(path), before);
  }
}

TEST(Schema, MigrateToRefusesAVersionItHasNoMigrationFor) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  std::string err;
  ASSERT_TRUE(sql::Exec(db, "PRAGMA user_version = -3", &err)) << err;
  EXPECT_FALSE(schema::MigrateTo(db, schema::LatestVersion(), &err));
  EXPECT_NE(err.find("schema version -3 is not one forgek knows"), std::string::npos) << err;
  sqlite3_close(db);
}

TEST(Schema, RefusesForeignFilesAndLeavesThemAlone) {
  TempDir dir;
  std::string text = dir.file("notes.txt");
  WriteFile(text, "this is not a database, just someone's notes\n");
  Store store;
  std::string err;
  EXPECT_FALSE(store.Open(text, &err));
  EXPECT_NE(err.find("not a forgek knowledge store"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(text), "this is not a database, just someone's notes\n");

  std::string other = dir.file("other.db");
  RawExec(other, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');");
  std::string before = ReadFile(other);
  EXPECT_FALSE(store.Open(other, &err));
  EXPECT_NE(err.find("another program"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(other), before);

  EXPECT_FALSE(store.Open(dir.path(), &err));
  EXPECT_NE(err.find("is a folder"), std::string::npos) << err;
}

TEST(Schema, RefusesACorruptStore) {
  TempDir dir;
  std::string path = dir.file("store.db");
  {
    Store s;
    std::string err;
    ASSERT_TRUE(s.Open(path, &err)) << err;
    std::vector<Observation> obs(200);
    for (size_t i = 0; i < obs.size(); ++i) {
      obs[i].operator_name = "op";
      obs[i].key = "k" + std::to_string(i);
      obs[i].value = std::string(300, 'v');
    }
    ASSERT_TRUE(s.AddObservations(&obs, nullptr, &err)) << err;
    ASSERT_TRUE(sql::Exec(s.handle(), "PRAGMA wal_checkpoint(TRUNCATE)", &err)) << err;
  }
  // Keep the header (so it still looks like SQLite) and overwrite pages after the first.
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 16384u);
  for (size_t i = 4096; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(0xA5);
  WriteFile(path, bytes);
  Store store;
  std::string err;
  EXPECT_FALSE(store.Open(path, &err));
  EXPECT_TRUE(err.find("corrupt") != std::string::npos || err.find("malformed") != std::string::npos) << err;
  EXPECT_EQ(ReadFile(path), bytes);
}

}  // namespace
}  // namespace forgek
