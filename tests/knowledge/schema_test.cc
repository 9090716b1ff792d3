// Migrations, and refusing newer, foreign and corrupt files without touching them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "forgek/store.h"
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
