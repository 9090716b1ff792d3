// The compile service's side of a contained compile: start the compile child, hand it the
// request, watch its deadline, and turn how it ended into a result a person can act on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nvrtc_program.h"

namespace forgek {

struct ChildLimits {
  std::vector<std::string> command;        // the compile child: {binary, "compile-worker"}
  std::vector<std::string> read_folders;   // all the child may read
  std::vector<std::string> write_folders;  // all it may write (precompiled headers)
  bool allow_unconfined = false;           // FORGEK_UNCONFINED_COMPILE=1
  uint64_t address_space_bytes = 0;
  uint64_t stack_bytes = 0;                // the main thread's stack, where NVRTC runs (0: as inherited)
  double timeout_s = 120;                  // wall time; the CPU limit follows from it
};

struct ChildRun {
  NvrtcRun run;
  bool timed_out = false;  // killed at the wall deadline or the CPU limit
  bool stopped = false;    // killed because should_stop said so (the compiler shuts down)
  std::string failure;     // why no compiler verdict came back: a crash, a limit, no confinement
  int landlock_abi = 0;
};

// Compiles `source` in a child process. `should_stop` is polled while it runs.
ChildRun CompileInChild(const std::string& name, const std::string& source, const std::vector<std::string>& options,
                        const ChildLimits& limits, const std::function<bool()>& should_stop);

// The environment a compile child gets: the loader's and the sanitizers' variables only, so that
// no secret (an API key) is even in its memory.
std::vector<std::string> CompileChildEnvironment();

}  // namespace forgek
