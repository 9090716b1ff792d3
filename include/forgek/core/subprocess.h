// Child processes: the one way forgek starts the GPU worker, batch runs and toolkit tools.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
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
  // The child's whole environment ("NAME=value" each) when set; else it inherits forgek's.
  bool replace_environment = false;
  std::vector<std::string> environment;
};

// Starts argv[0] (a path, not searched in PATH) with argv; false with the reason when it cannot.
bool SpawnProcess(const std::vector<std::string>& argv, const SpawnOptions& opts, pid_t* pid, std::string* err);

// The exit code of a wait status: the code of an exit, 128 + the signal of a kill.
int ExitCodeOf(int wait_status);

// Waits for the child `pid` (-1: whichever child ends first) to end and reaps it, the wait resumed
// when a signal interrupts it; fills the pid that ended and its wait status. timeout_s < 0 waits as
// long as it takes; else it polls and, after about timeout_s, returns false with *err "still
// running", the child left alone. False with the reason when there is no such child to wait for.
bool WaitForChild(pid_t pid, double timeout_s, pid_t* ended, int* wait_status, std::string* err);

struct ProcessOutput {
  bool started = false;
  bool timed_out = false;  // killed (SIGKILL) after the timeout
  int exit_code = -1;
  std::string out, err;    // everything the child wrote to stdout and stderr
};

// How RunProcess starts and watches a child.
struct ProcessOptions {
  double timeout_s = 60;        // SIGKILL after this many seconds of wall time
  std::string stdin_data;       // what the child reads on stdin (then end of file); empty: /dev/null
  bool new_process_group = false;
  bool replace_environment = false;  // with `environment` as the child's whole environment
  std::vector<std::string> environment;
  size_t max_output_bytes = 0;  // per stream; past it the child is killed and `overflowed` set (0: no limit)
  // Polled about every 50 ms; when it answers true the child is killed and `stopped` set.
  std::function<bool()> should_stop;
};

struct ProcessRun : ProcessOutput {
  bool stopped = false;     // killed because should_stop said so
  bool overflowed = false;  // killed because a stream passed max_output_bytes
  int signal = 0;           // the signal that ended the child, 0 when it exited
  double seconds = 0;       // wall time from start to exit
};

// Runs argv with stdin /dev/null, collecting both streams, and kills it after `timeout_s`.
ProcessOutput RunProcess(const std::vector<std::string>& argv, double timeout_s);
// The same with the options above; stdin data goes through an in-memory file, so a large input
// never blocks against an unread pipe.
ProcessRun RunProcess(const std::vector<std::string>& argv, const ProcessOptions& opts);

}  // namespace forgek
