// The one subprocess helper: streams redirected, output collected, timeouts enforced.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>

#include "forgek/core/subprocess.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(RunProcess, CollectsBothStreamsAndTheExitCode) {
  ProcessOutput r = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(RunProcess, StdinIsDevNull) {
  ProcessOutput r = RunProcess({"/bin/sh", "-c", "cat; echo done"}, 10);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "done\n");
}

TEST(RunProcess, KillsAChildThatOutlivesItsTimeout) {
  ProcessOutput r = RunProcess({"/bin/sh", "-c", "exec sleep 30"}, 0.3);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
}

TEST(RunProcess, AMissingProgramIsNotStarted) {
  ProcessOutput r = RunProcess({"/nonexistent/forgek-tool"}, 10);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.err.find("/nonexistent/forgek-tool"), std::string::npos) << r.err;
}

TEST(RunProcess, HandsStdinDataOverWhateverItsSize) {
  ProcessOptions opts;
  opts.stdin_data = std::string(1 << 20, 'x') + "end";  // far beyond a pipe's buffer
  ProcessRun r = RunProcess({"/bin/sh", "-c", "wc -c"}, opts);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stol(r.out), (1 << 20) + 3);
}

TEST(RunProcess, AReplacedEnvironmentIsAllTheChildSees) {
  setenv("FORGEK_TEST_SECRET", "s3cret", 1);
  ProcessOptions opts;
  opts.replace_environment = true;
  opts.environment = {"ONLY=this"};
  ProcessRun r = RunProcess({"/usr/bin/env"}, opts);
  unsetenv("FORGEK_TEST_SECRET");
  EXPECT_EQ(r.out, "ONLY=this\n");
}

TEST(RunProcess, StopAndOutputLimitKillTheChild) {
  ProcessOptions opts;
  auto start = std::chrono::steady_clock::now();
  opts.should_stop = [&] { return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(200); };
  ProcessRun r = RunProcess({"/bin/sh", "-c", "exec sleep 30"}, opts);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.signal, SIGKILL);
  ProcessOptions limited;
  limited.max_output_bytes = 1000;
  r = RunProcess({"/bin/sh", "-c", "yes"}, limited);
  EXPECT_TRUE(r.overflowed);
  EXPECT_FALSE(r.timed_out);
}

TEST(SpawnProcess, RedirectsStreamsToFiles) {
  TempDir tmp;
  SpawnOptions io;
  io.stdout_path = tmp.file("out.txt");
  io.stderr_path = tmp.file("err.txt");
  pid_t pid = -1;
  std::string err;
  ASSERT_TRUE(SpawnProcess({"/bin/sh", "-c", "echo to-out; echo to-err >&2"}, io, &pid, &err)) << err;
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(ExitCodeOf(status), 0);
  EXPECT_EQ(ReadFile(tmp.file("out.txt")), "to-out\n");
  EXPECT_EQ(ReadFile(tmp.file("err.txt")), "to-err\n");
}

TEST(WaitForChild, ReapsAChildGivesUpAfterItsTimeoutAndNamesAMissingOne) {
  pid_t pid = -1, ended = -1;
  int status = 0;
  std::string err;
  ASSERT_TRUE(SpawnProcess({"/bin/sh", "-c", "exit 3"}, SpawnOptions{}, &pid, &err)) << err;
  ASSERT_TRUE(WaitForChild(pid, -1, &ended, &status, &err)) << err;
  EXPECT_EQ(ended, pid);
  EXPECT_EQ(ExitCodeOf(status), 3);

  ASSERT_TRUE(SpawnProcess({"/bin/sleep", "30"}, SpawnOptions{}, &pid, &err)) << err;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(WaitForChild(pid, 0.1, &ended, &status, &err));
  EXPECT_EQ(err, "still running");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  kill(pid, SIGKILL);
  ASSERT_TRUE(WaitForChild(pid, 5, &ended, &status, &err)) << err;
  EXPECT_EQ(ExitCodeOf(status), 128 + SIGKILL);

  EXPECT_FALSE(WaitForChild(pid, -1, &ended, &status, &err)) << "already reaped";
  EXPECT_NE(err.find("waitpid: "), std::string::npos) << err;
}

TEST(SpawnProcess, AnEmptyCommandIsAnError) {
  pid_t pid = -1;
  std::string err;
  EXPECT_FALSE(SpawnProcess({}, SpawnOptions{}, &pid, &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace forgek
