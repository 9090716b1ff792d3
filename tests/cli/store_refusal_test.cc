// Stores forgek must refuse, or read without writing, end to end: a negative schema version (it
// crashed every writing command), a healthy store in a read-only folder (read-only commands called
// it corrupt).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "forgek/knowledge/store.h"
#include "test_util.h"
#include "unprivileged.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

void SetUserVersion(const std::string& path, int version) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(version)).c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

std::string NewStore(const TempDir& dir) {
  std::string path = dir.file("k.db"), err;
  Store s;
  EXPECT_TRUE(s.Open(path, &err)) << err;
  return path;
}

TEST(StoreRefusal, ANegativeSchemaVersionIsRefusedByReadingAndWritingCommands) {
  TempDir dir;
  std::string store = NewStore(dir);
  SetUserVersion(store, -1);
  WriteFile(dir.file("empty.json"), R"({"format": "forgek-knowledge", "schema": 4})");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"knowledge", "import", dir.file("empty.json")},  // writes: crashed
        std::vector<std::string>{"knowledge", "list"}, std::vector<std::string>{"seal", "list"}}) {
    args.insert(args.begin(), {"--store", store});
    CommandResult r = RunForgek(args, {"XDG_CACHE_HOME=" + dir.path()});
    EXPECT_EQ(r.exit_code, 1) << args[2] << ": " << r.err;
    EXPECT_NE(r.err.find("knowledge store " + store + " has schema version -1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrupt or not a forgek store"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("open it once for writing"), std::string::npos) << r.err;
  }
}

TEST(StoreRefusal, ANewerSchemaVersionIsNamedNewer) {
  TempDir dir;
  std::string store = NewStore(dir);
  SetUserVersion(store, 1000);
  for (const char* command : {"list", "export"}) {
    CommandResult r = RunForgek({"--store", store, "knowledge", command});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("schema version 1000, newer than this forgek understands"), std::string::npos) << r.err;
  }
}

TEST(StoreRefusal, ReadOnlyCommandsReadAHealthyStoreInAReadOnlyFolder) {
  TempDir dir;
  std::string folder = dir.file("shared"), store = folder + "/k.db";
  fs::create_directories(folder);
  {
    Store s;
    std::string err;
    ASSERT_TRUE(s.Open(store, &err)) << err;
  }
  const auto rx = fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                  fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir.path(), rx | fs::perms::owner_write);
  fs::permissions(folder, rx);
  std::string got = AsUnprivileged([&] {
    std::string out;
    for (const char* group : {"knowledge", "seal"}) {
      CommandResult r = RunForgek({"--store", store, group, "list"});
      out += std::string(group) + ": exit " + std::to_string(r.exit_code) + "\n";
      if (r.exit_code != 0) out += r.err;
    }
    return out;
  });
  fs::permissions(folder, fs::perms::owner_all);
  EXPECT_EQ(got, "knowledge: exit 0\nseal: exit 0\n");  // was exit 1, "corrupt or not a store: not an error"
}

}  // namespace
}  // namespace forgek
