// The golden's outputs of one config computed by PyTorch: the inputs as generated on the device go
// to the helper, its outputs come back where a golden kernel would have written them.
#pragma once

#include <string>

#include "config_buffers.h"
#include "torch_golden.h"

namespace forgek::worker {

// The yardstick's sampling: at most this many calls per mode, stopped after this many seconds of
// sampling (5 calls at least). Each call is bracketed alone, cold L2: a few dozen settle a median.
inline constexpr int kTorchYardstickReps = 50;
inline constexpr double kTorchYardstickBudgetS = 20;

// Has `torch` compute the outputs of `file` at the config's values from copy 0 of every input, into
// the truth buffers (poisoned before, by ResetTruth, and checked after, as a golden kernel's).
// The tensors stay on the GPU where the helper can map them (CUDA IPC: no copy through the host);
// else, or with FORGEK_TORCH_TRANSPORT=pipes, the inputs go to the host and through the pipes and
// the outputs come back the same way. Adds this seed's cost and transport to `timing`. An operator
// with an inout tensor, or a dtype PyTorch cannot carry, is refused.
bool ComputeTorchTruth(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
                       TorchGolden* torch, GoldenTiming* timing, GpuError* err);

// The yardstick of one config: copy 0 of every input (as the golden gets them, in their own
// dtypes) to the helper, which times the problem eagerly and under torch.compile; the samples
// summarised as the worker's own (Summarize). A failure is said in `out` (eager_error), never
// fails the evaluation: the yardstick is beside the verdict, not part of it.
// `yardstick` is a PyTorch problem's path (its inputs: copy 0, as above) or "torch_ops:NAME" (a
// built-in operator: the helper draws its inputs from the config's inits, scripts/torch_ops.py).
void MeasureTorchYardstick(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config,
                           const std::string& yardstick, TorchGolden* torch, TorchYardstick* out);

}  // namespace forgek::worker
