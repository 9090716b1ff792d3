// The GPU worker process (`forgek worker`): entry points for the serve loop, probe and calibration.
#pragma once

#include <cstdio>
#include <string>

#include "forgek/protocol/worker_protocol.h"

namespace forgek::worker {

// Serves requests from `in` until shutdown or end of input; replies on `out`. Returns the exit
// code: 0 after shutdown or EOF, 3 after a sticky CUDA error (the context is dead), 1 when the
// GPU could not be opened.
int Serve(std::FILE* in, std::FILE* out);

// Measures the device's peaks (copy bandwidth and dense GEMM throughput per type) on device 0.
bool Calibrate(DevicePeaks* out, std::string* err);

}  // namespace forgek::worker
