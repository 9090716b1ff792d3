// The one subprocess helper: streams redirected, output collected, timeouts enforced.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include "forgek/subprocess.h"
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

TEST(SpawnProcess, AnEmptyCommandIsAnError) {
  pid_t pid = -1;
  std::string err;
  EXPECT_FALSE(SpawnProcess({}, SpawnOptions{}, &pid, &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace forgek
