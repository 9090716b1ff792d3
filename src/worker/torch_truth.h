// The golden's outputs of one config computed by PyTorch: the inputs as generated on the device go
// to the helper, its outputs come back where a golden kernel would have written them.
#pragma once

#include <string>

#include "config_buffers.h"
#include "torch_golden.h"

namespace forgek::worker {

// Copies copy 0 of every input to the host, has `torch` compute the outputs of `file` at the
// config's values and uploads them into the truth buffers (poisoned before, by ResetTruth, and
// checked after, as a golden kernel's). Adds this seed's cost to `timing`. An operator with an
// inout tensor, or a dtype PyTorch cannot carry, is refused.
bool ComputeTorchTruth(GpuContext* gpu, ConfigBuffers* buffers, const WireConfig& config, const std::string& file,
                       TorchGolden* torch, GoldenTiming* timing, GpuError* err);

}  // namespace forgek::worker
