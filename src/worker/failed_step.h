// The reply status of a failed worker step, for evaluate and profile alike.
#pragma once

#include "forgek/protocol/worker_protocol.h"
#include "forgek/worker/gpu_context.h"

namespace forgek::worker {

// Sticky errors are crashes (the context is dead), other driver errors launch errors.
inline ReplyStatus StatusOfFailure(const GpuError& err) {
  if (err.sticky()) return ReplyStatus::crash;
  return err.code != CUDA_SUCCESS ? ReplyStatus::launch_error : ReplyStatus::error;
}

}  // namespace forgek::worker
