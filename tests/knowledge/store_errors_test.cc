// Store errors name the store's path and tell unwritable, locked and corrupt apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "forgek/knowledge/store.h"
#include "knowledge/sql.h"
#include "test_util.h"
#include "unprivileged.h"

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

// A store in a folder `body`'s user may only read and enter (as root, the test drops to nobody).
struct ReadOnlyFolderStore {
  TempDir dir;
  std::string folder = dir.file("ro"), path = folder + "/k.db";
  std::string run_id;

  ReadOnlyFolderStore() {
    fs::create_directories(folder);
    Store s;
    std::string err;
    EXPECT_TRUE(s.Open(path, &err)) << err;
    RunRecord run;
    run.operator_name = "softmax_fp32";
    run.arch = "sm90";
    run.status = "finished";
    EXPECT_TRUE(s.AddRun(&run, &err)) << err;
    run_id = run.id;
  }
  void Lock() {
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  }
  ~ReadOnlyFolderStore() { fs::permissions(folder, fs::perms::owner_all); }
};

TEST(StoreErrors, AStoreInAnUnwritableFolderIsNotCalledCorrupt) {
  ReadOnlyFolderStore ro;
  ro.Lock();
  std::string err = AsUnprivileged([&] {
    Store s;
    std::string e;
    return s.Open(ro.path, &e, StoreMode::existing) ? std::string("opened for writing") : e;
  });
  EXPECT_NE(err.find(ro.path), std::string::npos) << err;
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  EXPECT_EQ(err.find("corrupt"), std::string::npos) << err;
}

// A healthy store in a folder the user may not write was "corrupt or not a store: not an error" to
// read-only commands (issue 29, item 9): a user might delete it. It is read as it is.
TEST(StoreErrors, AHealthyStoreInAReadOnlyFolderIsReadByReadOnlyCommands) {
  ReadOnlyFolderStore ro;
  ASSERT_FALSE(ro.run_id.empty());
  ro.Lock();
  std::string got = AsUnprivileged([&] {
    Store s;
    std::string e;
    if (!s.Open(ro.path, &e, StoreMode::read_only)) return "open: " + e;
    RunRecord run;
    bool found = false;
    if (!s.GetRun(ro.run_id, &run, &found, &e)) return "read: " + e;
    if (!found) return std::string("the run is missing");
    // Writing stays refused, naming the store.
    RunRecord more;
    more.operator_name = "x";
    more.arch = "sm90";
    if (s.AddRun(&more, &e)) return std::string("a write went through");
    return "ok " + run.operator_name;
  });
  EXPECT_EQ(got, "ok softmax_fp32");
  EXPECT_FALSE(fs::exists(ro.path + "-shm"));
}

// Transactions waiting in a -wal file cannot be read without a -shm file: said so, not "corrupt".
TEST(StoreErrors, AReadOnlyFolderWithPendingWalSaysWhatToDo) {
  ReadOnlyFolderStore ro;
  {
    // A writer that keeps its WAL: copy the store and the -wal file while it is open.
    Store w;
    std::string err;
    ASSERT_TRUE(w.Open(ro.path, &err)) << err;
    ASSERT_TRUE(sql::Exec(w.handle(), "PRAGMA wal_autocheckpoint = 0", &err)) << err;
    RunRecord run;
    run.operator_name = "later";
    run.arch = "sm90";
    ASSERT_TRUE(w.AddRun(&run, &err)) << err;
    ASSERT_GT(fs::file_size(ro.path + "-wal"), 0u);
    fs::create_directories(ro.dir.file("copy"));
    fs::copy_file(ro.path, ro.dir.file("copy/k.db"));
    fs::copy_file(ro.path + "-wal", ro.dir.file("copy/k.db-wal"));
  }
  std::string copy = ro.dir.file("copy/k.db");
  fs::permissions(ro.dir.file("copy"), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read |
                                           fs::perms::others_exec);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::others_read);
  fs::permissions(copy + "-wal", fs::perms::owner_read | fs::perms::others_read);
  ro.Lock();
  std::string err = AsUnprivileged([&] {
    Store s;
    std::string e;
    return s.Open(copy, &e, StoreMode::read_only) ? std::string("opened") : e;
  });
  fs::permissions(ro.dir.file("copy"), fs::perms::owner_all);
  EXPECT_NE(err.find("cannot read knowledge store " + copy + ": its folder is not writable"), std::string::npos)
      << err;
  EXPECT_NE(err.find("-wal"), std::string::npos) << err;
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
