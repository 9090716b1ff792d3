// The one mapping of worker call and reply statuses onto outcomes.
#include <gtest/gtest.h>

#include "forgek/worker_client.h"

namespace forgek {
namespace {

using S = WorkerClient::Status;

Outcome Failure(S call, const std::string& reply_status) {
  Outcome o = Outcome::faster;
  EXPECT_TRUE(WorkerFailure(call, reply_status, &o)) << reply_status;
  return o;
}

TEST(WorkerFailure, CallsThatFailMapOntoTimeoutOrCrash) {
  EXPECT_EQ(Failure(S::timeout, "ok"), Outcome::timeout);
  EXPECT_EQ(Failure(S::died, "ok"), Outcome::crash);
  EXPECT_EQ(Failure(S::protocol_error, ""), Outcome::crash);
  EXPECT_EQ(Failure(S::spawn_error, ""), Outcome::crash);
}

TEST(WorkerFailure, ReplyStatusesMapOntoCrashOrLaunchError) {
  EXPECT_EQ(Failure(S::ok, "crash"), Outcome::crash);
  EXPECT_EQ(Failure(S::ok, "launch_error"), Outcome::launch_error);
  EXPECT_EQ(Failure(S::ok, "something new"), Outcome::launch_error);
}

TEST(WorkerFailure, AnOkReplyIsNoFailure) {
  Outcome o = Outcome::faster;
  EXPECT_FALSE(WorkerFailure(S::ok, "ok", &o));
  EXPECT_EQ(o, Outcome::faster);  // untouched
}

}  // namespace
}  // namespace forgek
