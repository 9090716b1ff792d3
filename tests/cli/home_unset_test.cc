// forgek started without HOME (cron, systemd, CI containers) and forgek's own folders: the store
// and the compile cache never go to a shared /tmp path, and a folder another user owns or may write
// is refused (issue 29, item 8).
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "operator_copy.h"
#include "test_util.h"
#include "unprivileged.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// HOME, FORGEK_STORE and the XDG folders unset ("NAME" alone removes NAME in the child).
const std::vector<std::string> kNoHome = {"HOME", "FORGEK_STORE", "XDG_DATA_HOME", "XDG_CACHE_HOME"};

// Was "no knowledge store at /tmp/.local/share/forgek/store.db".
TEST(HomeUnset, TheStoreIsLookedForInThePasswordDatabasesHome) {
  struct passwd* pw = getpwuid(geteuid());
  if (!pw || !pw->pw_dir || !fs::is_directory(pw->pw_dir)) GTEST_SKIP() << "this user has no home folder";
  std::string home = pw->pw_dir;
  TempDir dir;
  CommandResult r = RunForgek({"knowledge", "list"}, kNoHome);
  EXPECT_EQ(r.err.find("/tmp/"), std::string::npos) << r.err;
  if (r.exit_code != 0) {
    EXPECT_NE(r.err.find(home + "/.local/share/forgek/store.db"), std::string::npos) << r.err;
  }
}

// A user the password database does not know, without HOME: refused, naming the way out.
TEST(HomeUnset, WithoutAnyHomeCommandsRefuseAndNameTheWayOut) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become a user the password database does not know";
  const uid_t stranger = 54321;
  ASSERT_EQ(getpwuid(stranger), nullptr) << "uid " << stranger << " has an entry here";
  TempDir dir;
  fs::permissions(dir.path(), fs::perms::all);  // reachable by the stranger, for the XDG case below
  std::string got = AsUser(stranger, [&] {
    std::string out;
    CommandResult list = RunForgek({"knowledge", "list"}, kNoHome);
    out += "list: " + std::to_string(list.exit_code) + " " + list.err + "\n";
    std::vector<std::string> env = kNoHome;
    env.push_back("XDG_DATA_HOME=" + dir.file("data"));
    env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
    CommandResult with_xdg = RunForgek({"knowledge", "list"}, env);
    out += "xdg: " + std::to_string(with_xdg.exit_code) + " " + with_xdg.err + "\n";
    return out;
  });
  EXPECT_NE(got.find("list: 1 "), std::string::npos) << got;
  EXPECT_NE(got.find("HOME is not set and this user (uid 54321) has no home folder"), std::string::npos) << got;
  for (const char* way : {"FORGEK_STORE", "XDG_DATA_HOME", "XDG_CACHE_HOME"})
    EXPECT_NE(got.find(way), std::string::npos) << way << ": " << got;
  EXPECT_EQ(got.find("/tmp/.local"), std::string::npos) << got;
  // With the XDG folders set no home is needed: the store is looked for there.
  EXPECT_NE(got.find("xdg: 1 "), std::string::npos) << got;
  EXPECT_NE(got.find("no knowledge store at " + dir.file("data") + "/forgek/store.db"), std::string::npos) << got;
}

// A default store folder another user could write (created first in a shared place) is refused.
TEST(HomeUnset, ADefaultStoreFolderOthersMayWriteIsRefused) {
  TempDir dir;
  std::string folder = dir.file("data/forgek");
  fs::create_directories(folder);
  chmod(folder.c_str(), 0777);
  CommandResult r = RunForgek({"knowledge", "list"}, {"FORGEK_STORE", "XDG_DATA_HOME=" + dir.file("data")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(folder + " is writable by every user (mode 0777)"), std::string::npos) << r.err;
  // A store the user names is the user's choice, a shared one included.
  r = RunForgek({"--store", folder + "/store.db", "knowledge", "list"}, {"XDG_DATA_HOME=" + dir.file("data")});
  EXPECT_EQ(r.err.find("writable by every user"), std::string::npos) << r.err;
}

TEST(HomeUnset, ACacheFolderOfAnotherUserIsRefusedBeforeAnythingCompiles) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  std::string cache = dir.file("cache/forgek");
  fs::create_directories(cache);
  if (geteuid() == 0) ASSERT_EQ(chown(cache.c_str(), kUnprivilegedId, kUnprivilegedId), 0);
  else chmod(cache.c_str(), 0757);  // writable by others: refused as well
  CommandResult r = RunForgek({"--operators", ops, "ops", "validate", "tiny_scale"},
                              {"XDG_CACHE_HOME=" + dir.file("cache")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(cache), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(geteuid() == 0 ? "belongs to" : "writable by every user"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("XDG_CACHE_HOME"), std::string::npos) << r.err;
}

TEST(HomeUnset, ForgeksFoldersAreCreatedPrivate) {
  TempDir dir;
  std::vector<std::string> env = {"FORGEK_STORE", "XDG_DATA_HOME=" + dir.file("data"),
                                  "XDG_CACHE_HOME=" + dir.file("cache")};
  WriteFile(dir.file("empty.json"), R"({"format": "forgek-knowledge", "schema": 4})");
  CommandResult r = RunForgek({"knowledge", "import", dir.file("empty.json")}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunForgek({"doctor", "--no-gpu"}, env);
  auto mode = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0u;
  };
  EXPECT_EQ(mode(dir.file("data/forgek")), 0700u);
  EXPECT_EQ(mode(dir.file("cache/forgek")), 0700u);
  EXPECT_EQ(mode(dir.file("cache/forgek/nvrtc")), 0700u) << r.out << r.err;
}

}  // namespace
}  // namespace forgek
