// The smaller input holes of issue #29, end to end through the binary: huge input files, long
// lists of operator names, names that need shell quoting, batch outputs that cannot be written
// (said before any GPU or run), and a log file that is a FIFO.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/printable.h"
#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// A file of `size` bytes that holds no disk blocks.
void MakeSparse(const std::string& path, off_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, size), 0) << path;
  ::close(fd);
}

TEST(InputHoles, HugeInputFilesAreRefusedFromTheirSize) {
  TempDir dir;
  const std::string huge = dir.file("huge");
  MakeSparse(huge, off_t{20} << 30);
  const std::string ops = CopyTinyScale(dir.file("ops"));
  CommandResult eval = RunForgek({"--operators", ops, "eval", "--op", "tiny_scale", "--kernel", huge});
  EXPECT_EQ(eval.exit_code, 1) << eval.err;
  EXPECT_NE(eval.err.find(huge + ": cannot read the candidate file: it is 21474836480 bytes (20 GiB)"),
            std::string::npos)
      << eval.err;
  EXPECT_EQ(eval.err.find("bad_alloc"), std::string::npos) << eval.err;
  CommandResult import = RunForgek({"--store", dir.file("k.db"), "knowledge", "import", huge});
  EXPECT_EQ(import.exit_code, 1) << import.err;
  EXPECT_NE(import.err.find("cannot import " + huge + ": it is 21474836480 bytes (20 GiB)"), std::string::npos)
      << import.err;
  EXPECT_NE(import.err.find("at most 67108864 bytes (64 MiB)"), std::string::npos) << import.err;
}

// Other lists in messages stop at 20 and count the rest; the operators of an unknown --op did not.
TEST(InputHoles, AnUnknownOperatorListsTwentyNamesAndCountsTheRest) {
  TempDir dir;
  for (int i = 0; i < 30; ++i) {
    std::string op = dir.file("op_" + std::to_string(100 + i));
    fs::create_directories(op);
    WriteFile(op + "/operator.json", "{}");
  }
  CommandResult r = RunForgek({"--operators", dir.path(), "ops", "show", "zzz"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown operator 'zzz'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("op_100, op_101"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("op_119, ... and 10 more"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("op_120"), std::string::npos) << r.err;
}

TEST(InputHoles, OpsListSuggestsAValidateCommandThatPastes) {
  TempDir dir;
  for (const std::string& name : std::vector<std::string>{"plain_op", "two words;rm -rf x", "it's"}) {
    fs::create_directories(dir.file(name));
    WriteFile(dir.file(name) + "/operator.json", "{}");
  }
  CommandResult r = RunForgek({"--operators", dir.path(), "ops", "list"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("forgek ops validate plain_op\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("forgek ops validate 'two words;rm -rf x'\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("forgek ops validate 'it'\\''s'\n"), std::string::npos) << r.err;
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  using cli::ShellQuote;
  EXPECT_EQ(ShellQuote("gemm_bf16"), "gemm_bf16");
  EXPECT_EQ(ShellQuote("a/b-c.d,e:f=g+h@i%j"), "a/b-c.d,e:f=g+h@i%j");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$(reboot)"), "'$(reboot)'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("a\nb\x1b[31m'\\"), "$'a\\nb\\x1b[31m\\'\\\\'");
}

// Each bad output path ends the batch at once with its option named: exit 2 for a path that means
// nothing (no such folder, a folder named as the file, a file named as the folder), 1 for one that
// cannot be written; never "no usable GPU", which a check after the GPU probe would say first here.
TEST(InputHoles, BatchChecksItsOutputsBeforeAnyGpuOrRun) {
  TempDir dir;
  const std::string ops = CopyTinyScale(dir.file("ops"));
  WriteFile(dir.file("file"), "x");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string said;
  };
  const std::vector<Case> cases = {
      {{"--scoreboard-md", dir.file("missing/s.md")}, 2, "--scoreboard-md " + dir.file("missing/s.md") + ": its folder"},
      {{"--scoreboard-json", dir.path()}, 2, "--scoreboard-json " + dir.path() + ": it is a folder"},
      {{"--scoreboard-md", dir.file("fifo")}, 2, "it is a FIFO"},
      {{"--scoreboard-md", dir.file("file/s.md")}, 2, "--scoreboard-md " + dir.file("file/s.md")},
      {{"--log-dir", dir.file("file")}, 2, "--log-dir " + dir.file("file") + ": it is a file, not a folder"},
      {{"--log-dir", dir.file("file/logs")}, 2, "--log-dir " + dir.file("file/logs")},
      // Root may write anywhere but in /proc: a folder that takes no file, whoever asks.
      {{"--scoreboard-json", "/proc/forgek-scoreboard.json"}, 1, "cannot write in its folder /proc"},
      {{"--log-dir", "/proc/forgek-logs"}, 1, "--log-dir /proc/forgek-logs: cannot write in /proc"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--operators", ops, "--store", dir.file("k.db"), "batch", "tiny_scale"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandResult r = RunForgek(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.err.find("no usable GPU"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("missing")));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().rfind(".forgek-probe", 0), std::string::npos) << "probe left behind";
}

// A FIFO as --log-file: with no reader, open() blocked for ever; with one, the log went into the
// pipe. Both are refused before anything is written.
TEST(InputHoles, ALogFileThatIsAFifoIsRefused) {
  TempDir dir;
  const std::string fifo = dir.file("log.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Should the binary block in open() anyway, a reader comes after 20 s and lets it go on, so the
  // test fails (exit 0) instead of hanging.
  pid_t rescuer = ::fork();
  ASSERT_GE(rescuer, 0);
  if (rescuer == 0) {
    ::sleep(20);
    int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[4096];
    while (fd >= 0 && ::read(fd, buf, sizeof buf) > 0) {
    }
    ::_exit(0);
  }
  CommandResult alone = RunForgek({"--log-file", fifo, "version"});
  ::kill(rescuer, SIGKILL);
  ::waitpid(rescuer, nullptr, 0);
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("--log-file " + fifo + " is a FIFO"), std::string::npos) << alone.err;

  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  CommandResult read = RunForgek({"--log-file", fifo, "version"});
  ::close(reader);
  EXPECT_EQ(read.exit_code, 2) << read.err;
  EXPECT_NE(read.err.find("--log-file " + fifo + " is a FIFO, not a regular file"), std::string::npos) << read.err;
}

}  // namespace
}  // namespace forgek
