// Per-user locations: the home without HOME (cron, systemd, containers), and forgek's own folders
// private to the user who runs it (issue 29, item 8).
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "forgek/core/paths.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string PasswdHomeOfThisUser() {
  struct passwd* pw = getpwuid(geteuid());
  return pw && pw->pw_dir ? pw->pw_dir : "";
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

TEST(Paths, HomeComesFromHomeElseThePasswordDatabase) {
  TempDir dir;
  std::string home, err;
  ASSERT_TRUE(ChooseHomeDir("/home/alice", dir.path(), &home, &err)) << err;
  EXPECT_EQ(home, "/home/alice");
  ASSERT_TRUE(ChooseHomeDir(nullptr, dir.path(), &home, &err)) << err;
  EXPECT_EQ(home, dir.path());
  ASSERT_TRUE(ChooseHomeDir("", dir.path(), &home, &err)) << err;
  EXPECT_EQ(home, dir.path());
}

// No HOME and no home in the password database: refused, never /tmp (another local user could
// create forgek's folders there first and supply its incumbents and cubins).
TEST(Paths, WithoutAnyHomeTheErrorNamesTheWayOut) {
  std::string home = "unchanged", err;
  EXPECT_FALSE(ChooseHomeDir(nullptr, "", &home, &err));
  EXPECT_EQ(home, "unchanged");
  EXPECT_NE(err.find("HOME is not set"), std::string::npos) << err;
  for (const char* way : {"FORGEK_STORE", "XDG_DATA_HOME", "XDG_CACHE_HOME"})
    EXPECT_NE(err.find(way), std::string::npos) << way << ": " << err;
  EXPECT_FALSE(ChooseHomeDir("", "/nonexistent-forgek-home", &home, &err));
  EXPECT_NE(err.find("HOME is empty"), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent-forgek-home is not one"), std::string::npos) << err;
}

// Was HOME=/tmp: /tmp/.local/share/forgek/store.db and /tmp/.cache/forgek.
TEST(Paths, WithHomeUnsetTheDefaultsAreUnderThePasswordDatabasesHome) {
  std::string passwd_home = PasswdHomeOfThisUser();
  if (passwd_home.empty() || !fs::is_directory(passwd_home)) GTEST_SKIP() << "this user has no home folder";
  ScopedEnv home("HOME", std::nullopt), store("FORGEK_STORE", std::nullopt), data("XDG_DATA_HOME", std::nullopt),
      cache("XDG_CACHE_HOME", std::nullopt);
  std::string path, err;
  ASSERT_TRUE(DefaultStorePath(&path, &err)) << err;
  EXPECT_EQ(path, passwd_home + "/.local/share/forgek/store.db");
  ASSERT_TRUE(DefaultCacheDir(&path, &err)) << err;
  EXPECT_EQ(path, passwd_home + "/.cache/forgek");
}

TEST(Paths, XdgAndForgekStoreNeedNoHome) {
  ScopedEnv home("HOME", std::nullopt), store("FORGEK_STORE", std::nullopt), data("XDG_DATA_HOME", "/data"),
      cache("XDG_CACHE_HOME", "/cache");
  std::string path, err;
  ASSERT_TRUE(DefaultStorePath(&path, &err)) << err;
  EXPECT_EQ(path, "/data/forgek/store.db");
  ASSERT_TRUE(DefaultCacheDir(&path, &err)) << err;
  EXPECT_EQ(path, "/cache/forgek");
  ScopedEnv named("FORGEK_STORE", "/x/k.db");
  ASSERT_TRUE(DefaultStorePath(&path, &err)) << err;
  EXPECT_EQ(path, "/x/k.db");
}

TEST(Paths, EnsurePrivateDirCreatesFoldersOfThisUserOnly) {
  TempDir dir;
  std::string deep = dir.file("a/b/forgek"), err;
  ASSERT_TRUE(EnsurePrivateDir(deep, &err)) << err;
  EXPECT_EQ(ModeOf(dir.file("a")), 0700u);
  EXPECT_EQ(ModeOf(deep), 0700u);
  EXPECT_TRUE(EnsurePrivateDir(deep, &err)) << err;  // again: it is ours
  EXPECT_TRUE(CheckPrivateDir(dir.file("missing"), &err)) << "a folder that does not exist is no one's";
}

TEST(Paths, AFolderOthersMayWriteIsRefused) {
  TempDir dir;
  std::string shared = dir.file("forgek"), err;
  fs::create_directories(shared);
  chmod(shared.c_str(), 0777);
  EXPECT_FALSE(EnsurePrivateDir(shared, &err));
  EXPECT_NE(err.find(shared + " is writable by every user (mode 0777)"), std::string::npos) << err;
  EXPECT_NE(err.find("chmod go-w " + shared), std::string::npos) << err;
  chmod(shared.c_str(), 0770);
  EXPECT_FALSE(CheckPrivateDir(shared, &err));
  EXPECT_NE(err.find("writable by its group (mode 0770)"), std::string::npos) << err;
  chmod(shared.c_str(), 0755);
  EXPECT_TRUE(CheckPrivateDir(shared, &err)) << err;
  WriteFile(dir.file("file"), "x");
  EXPECT_FALSE(CheckPrivateDir(dir.file("file"), &err));
  EXPECT_NE(err.find("is not a folder"), std::string::npos) << err;
}

TEST(Paths, AFolderOfAnotherUserIsRefused) {
  TempDir dir;
  std::string theirs = dir.file("forgek"), err;
  if (geteuid() == 0) {
    fs::create_directories(theirs);
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  } else {
    theirs = "/";  // root's
  }
  EXPECT_FALSE(EnsurePrivateDir(theirs, &err));
  EXPECT_NE(err.find(theirs + " belongs to "), std::string::npos) << err;
  EXPECT_NE(err.find("not to this user"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
