// The second hostile-input pass, end to end: unknown words, output that cannot be written, store
// paths that are not plain files or lack tables, and arguments checked before a GPU is looked for.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// An empty store at the latest schema, made the way a user makes one.
std::string MakeStore(const TempDir& dir) {
  std::string store = dir.file("k.db");
  CommandResult r = RunForgek({"--store", store, "knowledge", "import", SourceDir() + "/tests/fuzz/corpus/knowledge_import/small_export.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return store;
}

TEST(HostileCli, AnUnknownCommandIsNamedAsOne) {
  for (std::vector<std::string> args : {std::vector<std::string>{"bogus"},
                                        std::vector<std::string>{"--store", "/tmp/x.db", "-v", "bogus", "--json"}}) {
    CommandResult r = RunForgek(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("unknown command 'bogus'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run,"), std::string::npos) << r.err;  // the commands it could have been
  }
  // A missing command is still said the way CLI11 says it.
  CommandResult none = RunForgek({"--json"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err.find("unknown command"), std::string::npos) << none.err;
}

TEST(HostileCli, OutputThatCannotBeWrittenIsAFailure) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full on this machine";
  TempDir dir;
  std::string store = MakeStore(dir);
  for (const std::string& cmd : {"--store " + store + " knowledge export", "--store " + store + " --json seal list",
                                 std::string("ops list")}) {
    std::string line = ForgekBinary() + " " + cmd + " >/dev/full 2>" + dir.file("err.txt");
    int status = std::system(line.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << line;
    EXPECT_EQ(WEXITSTATUS(status), 1) << line;  // was 0: the output was lost without a word
    EXPECT_NE(ReadFile(dir.file("err.txt")).find("writing standard output"), std::string::npos) << line;
  }
}

TEST(HostileCli, AStoreThatIsAFifoOrALinkLoopIsRefusedAtOnce) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.file("fifo.db").c_str(), 0600), 0);
  fs::create_symlink(dir.file("loop.db"), dir.file("loop.db"));
  for (const auto& [file, kind] : {std::pair<std::string, std::string>{"fifo.db", "a FIFO"},
                                   std::pair<std::string, std::string>{"loop.db", "a symbolic link loop"}}) {
    // Before, opening the FIFO blocked for ever: the run's 60 s test timeout would fire.
    for (std::vector<std::string> args : {std::vector<std::string>{"seal", "list"},
                                          std::vector<std::string>{"knowledge", "export"},
                                          std::vector<std::string>{"doctor", "--no-gpu"}}) {
      args.insert(args.begin(), {"--store", dir.file(file)});
      CommandResult r = RunForgek(args);
      EXPECT_EQ(r.exit_code, 1) << args[2] << ": " << r.err;
      EXPECT_NE((r.err + r.out).find(dir.file(file) + " is " + kind + ", not a regular file"), std::string::npos)
          << args[2] << ": " << r.err << r.out;
    }
  }
}

TEST(HostileCli, FilesToReadThatAreFifosAreRefusedNotWaitedOn) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.file("fifo.json").c_str(), 0600), 0);
  CommandResult import = RunForgek({"--store", dir.file("k.db"), "knowledge", "import", dir.file("fifo.json")});
  EXPECT_EQ(import.exit_code, 1) << import.err;
  EXPECT_NE(import.err.find("is a FIFO, not a regular file"), std::string::npos) << import.err;
  CommandResult merge = RunForgek({"--store", dir.file("k.db"), "knowledge", "merge", dir.file("fifo.json")});
  EXPECT_EQ(merge.exit_code, 1) << merge.err;
  EXPECT_NE(merge.err.find("is a FIFO, not a regular file"), std::string::npos) << merge.err;
  CommandResult batch = RunForgek({"--store", dir.file("k.db"), "batch", "softmax_fp32", "--time", "1m",
                                   "--headroom-from", dir.file("fifo.json")});
  EXPECT_EQ(batch.exit_code, 2) << batch.err;
  EXPECT_NE(batch.err.find("is a FIFO, not a regular file"), std::string::npos) << batch.err;
}

TEST(HostileCli, AStoreWithoutATableFailsWhenOpenedAndDoctorSaysSo) {
  TempDir dir;
  std::string store = MakeStore(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE seals", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::string before = ReadFile(store);
  CommandResult list = RunForgek({"--store", store, "knowledge", "list"});
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_NE(list.err.find(store + " lacks table seals"), std::string::npos) << list.err;
  CommandResult doctor = RunForgek({"--store", store, "doctor", "--no-gpu"});
  EXPECT_EQ(doctor.exit_code, 1) << doctor.out;  // was OK while `seal list` failed
  EXPECT_NE(doctor.out.find("lacks table seals"), std::string::npos) << doctor.out;
  EXPECT_EQ(ReadFile(store), before);
}

TEST(HostileCli, DoctorTriesToCreateTheStoreRatherThanTrustingAccess) {
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  // access(W_OK) says yes to root in /proc; creating a file there fails.
  CommandResult r = RunForgek({"--store", "/proc/forgek-store.db", "doctor", "--no-gpu"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("/proc/forgek-store.db cannot be created"), std::string::npos) << r.out;
}

TEST(HostileCli, ArgumentsAreCheckedBeforeAGpuIsLookedFor) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  for (const Case& c : std::vector<Case>{
           {{"batch", "nope"}, "unknown operator 'nope'"},
           {{"batch", "softmax_fp32", "--time", "1m", "--headroom-from", dir.file("none.json")}, "--headroom-from"},
           {{"batch", "softmax_fp32", "--min-time", "nan"}, "--min-time"},
           {{"batch", "softmax_fp32", "--min-time", "-5"}, "0 or more"},
           {{"batch", "softmax_fp32", "--gpus", ""}, "--gpus"},
           {{"batch", "softmax_fp32", "--time", ""}, "--time"},
           {{"ops", "bench", "nope"}, "unknown operator 'nope'"},
           {{"ops", "show", "nope"}, "unknown operator 'nope'"},
           {{"ops", "validate", "--no-compile", "nope"}, "unknown operator 'nope'"},
           {{"run", "--op", "softmax_fp32", "--gpus", ""}, "--gpus"},
           {{"run", "--op", "softmax_fp32", "--time", ""}, "--time"},
           {{"knowledge", "list", "--limit", "-1"}, "--limit"},
           {{"seal", "export", "abc", ""}, "DIR"},
           {{"seal", "show", ""}, "ID"},
           {{"eval", "--op", "softmax_fp32", "--kernel", SourceDir() + "/operators/softmax_fp32/seed.cu", "--params", ",,,"},
            "--params"},
       }) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin(), {"--store", dir.file("k.db")});
    CommandResult r = RunForgek(args, {"XDG_CACHE_HOME=" + dir.path()});
    EXPECT_EQ(r.exit_code, 2) << args[2] << " " << args[3] << ": " << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << args[2] << " " << args[3] << ": " << r.err;
    EXPECT_EQ(r.err.find("no usable GPU"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("k.db")));  // nothing was created on the way
}

TEST(HostileCli, ALogFileThatStopsTakingWritesIsOneWarning) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full on this machine";
  TempDir dir;
  std::string store = MakeStore(dir);
  CommandResult r = RunForgek({"--log-file", "/dev/full", "--store", store, "knowledge", "export", "-o", dir.file("e.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cannot write the log file /dev/full"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("LOG ERROR"), std::string::npos) << r.err;  // spdlog's own words
  EXPECT_TRUE(fs::exists(dir.file("e.json")));  // the command itself went on
}

}  // namespace
}  // namespace forgek
