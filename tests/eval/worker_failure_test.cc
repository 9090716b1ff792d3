// The one mapping of worker call and reply statuses onto outcomes.
#include <gtest/gtest.h>

#include "forgek/eval/worker_client.h"

namespace forgek {
namespace {

using S = WorkerClient::Status;
using R = ReplyStatus;

Outcome Failure(S call, R reply_status) {
  Outcome o = Outcome::faster;
  EXPECT_TRUE(WorkerFailure(call, reply_status, &o)) << ReplyStatusName(reply_status);
  return o;
}

TEST(WorkerFailure, CallsThatFailMapOntoTimeoutOrCrash) {
  EXPECT_EQ(Failure(S::timeout, R::ok), Outcome::timeout);
  EXPECT_EQ(Failure(S::died, R::ok), Outcome::crash);
  EXPECT_EQ(Failure(S::protocol_error, R::error), Outcome::crash);
  EXPECT_EQ(Failure(S::spawn_error, R::error), Outcome::crash);
}

TEST(WorkerFailure, ReplyStatusesMapOntoCrashOrLaunchError) {
  EXPECT_EQ(Failure(S::ok, R::crash), Outcome::crash);
  EXPECT_EQ(Failure(S::ok, R::launch_error), Outcome::launch_error);
  EXPECT_EQ(Failure(S::ok, R::unsupported), Outcome::launch_error);
  EXPECT_EQ(Failure(S::ok, R::error), Outcome::launch_error);
}

TEST(WorkerFailure, AnOkReplyIsNoFailure) {
  Outcome o = Outcome::faster;
  EXPECT_FALSE(WorkerFailure(S::ok, R::ok, &o));
  EXPECT_EQ(o, Outcome::faster);  // untouched
}

}  // namespace
}  // namespace forgek
