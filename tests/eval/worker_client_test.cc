// The watchdog and respawn logic of WorkerClient, against scripted fake workers (/bin/sh).
#include "forgek/eval/worker_client.h"

#include <gtest/gtest.h>

#include <chrono>

#include "test_util.h"

namespace forgek {
namespace {

// A fake worker that answers every request with {"id":N,"type":"reply","ok":true,"echo":TYPE}.
const char* kEchoWorker =
    R"sh(while IFS= read -r line; do
         id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9-]*\).*/\1/')
         type=$(printf '%s' "$line" | sed 's/.*"type":"\([a-z]*\)".*/\1/')
         printf '{"id":%s,"type":"reply","ok":true,"echo":"%s"}\n' "$id" "$type"
       done)sh";

std::vector<std::string> Sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

TEST(WorkerClient, RequestReplyRoundTrip) {
  WorkerClient client(Sh(kEchoWorker));
  WorkerClient::Reply r = client.Call("hello", {}, 5);
  ASSERT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
  EXPECT_EQ(r.body["echo"], "hello");
  r = client.Call("evaluate", {{"x", 1}}, 5);
  ASSERT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
  EXPECT_EQ(r.body["echo"], "evaluate");
  EXPECT_EQ(client.spawns(), 1);  // one process served both
}

TEST(WorkerClient, WorkerThatNeverRepliesIsKilledAtTheDeadline) {
  WorkerClient client(Sh("read -r line; echo 'still thinking' >&2; sleep 30"));
  auto start = std::chrono::steady_clock::now();
  WorkerClient::Reply r = client.Call("evaluate", {}, 0.5);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, WorkerClient::Status::timeout);
  EXPECT_NE(r.detail.find("worker killed"), std::string::npos) << r.detail;
  EXPECT_LT(s, 5);
  EXPECT_FALSE(client.running());
}

TEST(WorkerClient, ProgressLinesExtendTheDeadlineByTheirBudget) {
  // Announces a 2 s step, takes 1 s, then replies: within deadline 0.5 + budget 2.
  WorkerClient client(Sh(R"sh(read -r line
    printf '{"id":1,"type":"progress","step":"timing","budget_s":2}\n'
    sleep 1
    printf '{"id":1,"type":"reply","ok":true}\n'
    sleep 30)sh"));
  WorkerClient::Reply r = client.Call("evaluate", {}, 0.5);
  EXPECT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
}

TEST(WorkerClient, StepOverrunNamesTheStep) {
  WorkerClient client(Sh(R"sh(read -r line
    printf '{"id":1,"type":"progress","step":"candidate seed 1","budget_s":0}\n'
    sleep 30)sh"));
  WorkerClient::Reply r = client.Call("evaluate", {}, 0.3);
  EXPECT_EQ(r.status, WorkerClient::Status::timeout);
  EXPECT_NE(r.detail.find("candidate seed 1"), std::string::npos) << r.detail;
}

TEST(WorkerClient, TheCallsBoundCutsStepsThatEachKeepTheirDeadline) {
  // Every 0.2 s a new step with a 10 s budget: no step overruns, but the call's bound of 0.8 s does.
  WorkerClient client(Sh(R"sh(read -r line
    while true; do printf '{"id":1,"type":"progress","step":"counter pass","budget_s":10}\n'; sleep 0.2; done)sh"));
  auto start = std::chrono::steady_clock::now();
  WorkerClient::Reply r = client.Call("profile", {}, 1.0, 0.8);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, WorkerClient::Status::timeout);
  EXPECT_NE(r.detail.find("counter pass cut at the call's bound of 0.8 s; worker killed"), std::string::npos) << r.detail;
  EXPECT_GE(s, 0.7);
  EXPECT_LT(s, 3);
  EXPECT_FALSE(client.running());
}

TEST(WorkerClient, WorkerThatExitsMidRequestIsReportedDeadWithItsStderr) {
  WorkerClient client(Sh("read -r line; echo 'CUDA_ERROR_ILLEGAL_ADDRESS in candidate' >&2; exit 3"));
  WorkerClient::Reply r = client.Call("evaluate", {}, 5);
  EXPECT_EQ(r.status, WorkerClient::Status::died);
  EXPECT_NE(r.detail.find("exited with status 3"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << r.detail;
  EXPECT_FALSE(client.running());
}

TEST(WorkerClient, MalformedAndStrayLinesAreSkipped) {
  WorkerClient client(Sh(R"sh(read -r line
    echo 'this is not json'
    printf '{"id":99,"type":"reply","ok":true}\n'
    printf '{"id":1,"type":"reply","ok":true,"good":1}\n'
    sleep 30)sh"));
  WorkerClient::Reply r = client.Call("hello", {}, 5);
  ASSERT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
  EXPECT_EQ(r.body["good"], 1);
}

TEST(WorkerClient, RespawnsAfterATimeoutAndServesTheNextRequest) {
  // The first process hangs; every later one echoes (a marker file tells them apart).
  TempDir dir;
  std::string marker = dir.file("first-done");
  std::string script = "if [ ! -e " + marker + " ]; then touch " + marker + "; read -r line; sleep 30; fi\n" +
                       kEchoWorker;
  WorkerClient client(Sh(script));
  EXPECT_EQ(client.Call("evaluate", {}, 0.5).status, WorkerClient::Status::timeout);
  WorkerClient::Reply r = client.Call("evaluate", {}, 5);
  ASSERT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
  EXPECT_EQ(r.body["echo"], "evaluate");
  EXPECT_EQ(client.spawns(), 2);
}

TEST(WorkerClient, RespawnsAfterACrash) {
  TempDir dir;
  std::string marker = dir.file("first-done");
  std::string script = "if [ ! -e " + marker + " ]; then touch " + marker + "; read -r line; exit 3; fi\n" +
                       kEchoWorker;
  WorkerClient client(Sh(script));
  EXPECT_EQ(client.Call("evaluate", {}, 5).status, WorkerClient::Status::died);
  WorkerClient::Reply r = client.Call("evaluate", {}, 5);
  EXPECT_EQ(r.status, WorkerClient::Status::ok) << r.detail;
  EXPECT_EQ(client.spawns(), 2);
}

TEST(WorkerClient, MissingExecutableIsASpawnError) {
  WorkerClient client({"/nonexistent/forgek-worker"});
  WorkerClient::Reply r = client.Call("hello", {}, 1);
  EXPECT_EQ(r.status, WorkerClient::Status::spawn_error);
  EXPECT_NE(r.detail.find("/nonexistent/forgek-worker"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace forgek
