// Child processes: the one way forgek starts the GPU worker, batch runs and toolkit tools.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace forgek {

// Where a child's standard streams go. A stream with an fd (>= 0) gets that descriptor; else one
// with a path gets the file (stdin read-only; stdout and stderr created or truncated); else it is
// inherited. stdin defaults to /dev/null: a child never reads the terminal by accident.
struct SpawnOptions {
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  std::string stdin_path = "/dev/null";
  std::string stdout_path, stderr_path;
  bool new_process_group = false;  // so one kill of the group reaches whatever the child starts
};

// Starts argv[0] (a path, not searched in PATH) with argv; false with the reason when it cannot.
bool SpawnProcess(const std::vector<std::string>& argv, const SpawnOptions& opts, pid_t* pid, std::string* err);

// The exit code of a wait status: the code of an exit, 128 + the signal of a kill.
int ExitCodeOf(int wait_status);

struct ProcessOutput {
  bool started = false;
  bool timed_out = false;  // killed (SIGKILL) after the timeout
  int exit_code = -1;
  std::string out, err;    // everything the child wrote to stdout and stderr
};

// Runs argv with stdin /dev/null, collecting both streams, and kills it after `timeout_s`.
ProcessOutput RunProcess(const std::vector<std::string>& argv, double timeout_s);

}  // namespace forgek
