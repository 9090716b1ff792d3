// The one mapping of how a worker call ends (call status, reply status) onto the store's outcomes.
#include "forgek/eval/worker_client.h"

namespace forgek {

bool WorkerFailure(WorkerClient::Status call, ReplyStatus reply_status, Outcome* out) {
  switch (call) {
    case WorkerClient::Status::ok:
      break;
    case WorkerClient::Status::timeout:
      *out = Outcome::timeout;
      return true;
    case WorkerClient::Status::died:
    case WorkerClient::Status::protocol_error:
    case WorkerClient::Status::spawn_error:
      *out = Outcome::crash;
      return true;
  }
  if (reply_status == ReplyStatus::ok) return false;
  *out = reply_status == ReplyStatus::crash ? Outcome::crash : Outcome::launch_error;
  return true;
}

}  // namespace forgek
