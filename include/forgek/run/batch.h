// Several operators at once: one run per free GPU, continuing after failures (`forgek batch`).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace forgek {

// Starts and waits for runs; the real one spawns `forgek run` processes, tests script it.
class RunLauncher {
 public:
  virtual ~RunLauncher() = default;
  // Starts the run of `op` on GPU `gpu`; false with `err` when it cannot start (that run fails,
  // the batch goes on).
  virtual bool Start(const std::string& op, int gpu, int* handle, std::string* err) = 0;
  // Blocks until one started run ends: its handle, exit code and what it printed on stdout.
  virtual bool WaitAny(int* handle, int* exit_code, std::string* output, std::string* err) = 0;
};

struct BatchRunResult {
  std::string op;
  int gpu = -1;
  int exit_code = -1;     // -1: never started
  std::string output;     // the run's stdout (its --json summary)
  std::string error;      // why it could not start
  double wall_s = 0;
};

// Runs every op, at most one per GPU at a time, each started as soon as a GPU is free. Results
// are in the order of `ops`. `progress` receives one line per start and end.
std::vector<BatchRunResult> RunBatch(const std::vector<std::string>& ops, const std::vector<int>& gpus,
                                     RunLauncher& launcher, const std::function<void(const std::string&)>& progress);

// The end-of-batch table (op, gpu, status, attempts, best speedup, seal, wall time) and its JSON.
std::string BatchSummaryText(const std::vector<BatchRunResult>& results, double wall_s);
std::string BatchSummaryJson(const std::vector<BatchRunResult>& results, double wall_s);

}  // namespace forgek
