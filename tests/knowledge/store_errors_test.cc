// Store errors name the store's path and tell unwritable, locked and corrupt apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "forgek/store.h"
#include "knowledge/sql.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

TEST(StoreErrors, AWriteToAReadOnlyStoreNamesItsPath) {
  // Was "SQL error: attempt to write a readonly database", with no file named.
  TempDir dir;
  std::string path = dir.file("k.db"), err;
  {
    Store s;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  Store ro;
  ASSERT_TRUE(ro.Open(path, &err, StoreMode::read_only)) << err;
  RunRecord run;
  run.operator_name = "op";
  run.arch = "sm90";
  EXPECT_FALSE(ro.AddRun(&run, &err));
  EXPECT_NE(err.find("readonly"), std::string::npos) << err;
  EXPECT_NE(err.find("knowledge store " + fs::canonical(path).string() + " is not writable"), std::string::npos)
      << err;
}

TEST(StoreErrors, KindsOfSqliteFailures) {
  EXPECT_STREQ(sql::ErrorKind(SQLITE_READONLY), "not writable");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_CANTOPEN), "not writable");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_BUSY), "locked");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_LOCKED), "locked");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_CORRUPT), "corrupt");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_NOTADB), "corrupt");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_FULL), "full");
  EXPECT_STREQ(sql::ErrorKind(SQLITE_IOERR_WRITE), "unreadable");
  EXPECT_EQ(sql::ErrorKind(SQLITE_CONSTRAINT), nullptr);
}

TEST(StoreErrors, AStoreInAnUnwritableFolderIsNotCalledCorrupt) {
  if (geteuid() == 0) GTEST_SKIP() << "permissions do not bind root";
  TempDir dir;
  std::string folder = dir.file("ro"), path = folder + "/k.db", err;
  fs::create_directories(folder);
  {
    Store s;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
  Store s;
  bool opened = s.Open(path, &err, StoreMode::existing);
  fs::permissions(folder, fs::perms::owner_all);
  ASSERT_FALSE(opened);
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  EXPECT_EQ(err.find("corrupt"), std::string::npos) << err;
}

TEST(StoreErrors, ACorruptStoreIsCalledCorrupt) {
  TempDir dir;
  std::string path = dir.file("k.db"), err;
  {
    Store s;
    ASSERT_TRUE(s.Open(path, &err)) << err;
  }
  // Keep the SQLite header, damage the pages behind it.
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 200u);
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  WriteFile(path, bytes);
  Store s;
  EXPECT_FALSE(s.Open(path, &err, StoreMode::read_only));
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
