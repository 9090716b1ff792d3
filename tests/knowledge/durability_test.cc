// Durability and concurrency with real processes: two writers at once, and a writer killed mid-loop.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {
namespace {

// A child's unit of work: one run and a few observations, in one transaction.
bool WriteOne(Store& store, const std::string& writer, int i, std::string* err) {
  return store.Transaction(
      [&](std::string* e) {
        RunRecord run;
        run.id = writer + "-" + std::to_string(i);
        run.operator_name = "gemm_bf16";
        run.arch = "sm90";
        if (!store.AddRun(&run, e)) return false;
        std::vector<Observation> obs(3);
        for (int k = 0; k < 3; ++k) {
          obs[k].operator_name = "gemm_bf16";
          obs[k].subject = run.id;
          obs[k].key = "k" + std::to_string(k);
          obs[k].value = std::string(200, 'x');
        }
        return store.AddObservations(&obs, nullptr, e);
      },
      err);
}

// Forks a writer that adds `count` units (forever when count < 0), reporting each commit's index
// on `ack_fd`. The child never returns.
pid_t SpawnWriter(const std::string& path, const std::string& writer, int count, int ack_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  Store store;
  std::string err;
  if (!store.Open(path, &err)) _exit(10);
  for (int i = 0; count < 0 || i < count; ++i) {
    if (!WriteOne(store, writer, i, &err)) _exit(11);
    if (ack_fd >= 0 && write(ack_fd, &i, sizeof i) != sizeof i) _exit(12);
  }
  _exit(0);
}

int CountRuns(Store& store, const std::string& prefix, std::set<std::string>* ids) {
  std::vector<RunRecord> runs;
  std::string err;
  EXPECT_TRUE(store.ListRuns("gemm_bf16", "sm90", &runs, &err)) << err;
  int n = 0;
  for (const auto& r : runs)
    if (r.id.rfind(prefix, 0) == 0) {
      ++n;
      if (ids) ids->insert(r.id);
    }
  return n;
}

TEST(Durability, TwoProcessesWritingAtOnceLoseNothing) {
  TempDir dir;
  std::string path = dir.file("shared/store.db");
  constexpr int kEach = 120;
  // Both children create the store themselves: even the first migration races.
  pid_t a = SpawnWriter(path, "a", kEach, -1);
  pid_t b = SpawnWriter(path, "b", kEach, -1);
  for (pid_t p : {a, b}) {
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "writer failed (10: open, 11: write)";
  }
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(path, &err, StoreMode::existing)) << err;
  EXPECT_EQ(CountRuns(store, "a-", nullptr), kEach);
  EXPECT_EQ(CountRuns(store, "b-", nullptr), kEach);
  std::vector<Observation> obs;
  ASSERT_TRUE(store.ListObservations({"gemm_bf16", "", "", "", "", 0}, &obs, &err));
  EXPECT_EQ(obs.size(), 2u * kEach * 3);
}

TEST(Durability, SigkilledWriterLeavesEveryCommittedTransaction) {
  TempDir dir;
  std::string path = dir.file("store.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = SpawnWriter(path, "k", -1, fds[1]);
  close(fds[1]);
  int last = -1, got = 0;
  while (got < 60) {
    int i = 0;
    ASSERT_EQ(read(fds[0], &i, sizeof i), static_cast<ssize_t>(sizeof i)) << "writer died early";
    last = i;
    ++got;
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  // Acknowledgements already in the pipe were commits too.
  for (int i = 0; read(fds[0], &i, sizeof i) == static_cast<ssize_t>(sizeof i);) last = i;
  close(fds[0]);

  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(path, &err, StoreMode::existing)) << err;  // opens, passes quick_check
  std::set<std::string> ids;
  int n = CountRuns(store, "k-", &ids);
  for (int i = 0; i <= last; ++i) EXPECT_TRUE(ids.count("k-" + std::to_string(i))) << i;
  // At most the transaction in flight when the signal came committed without its acknowledgement.
  EXPECT_GE(n, last + 1);
  EXPECT_LE(n, last + 2);
  // And every committed run has all of its observations: transactions are whole.
  std::vector<Observation> obs;
  ASSERT_TRUE(store.ListObservations({"gemm_bf16", "", "", "", "", 0}, &obs, &err));
  EXPECT_EQ(obs.size(), static_cast<size_t>(n) * 3);
}

}  // namespace
}  // namespace forgek
