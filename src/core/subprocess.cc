// Child processes over posix_spawn: redirected streams, process groups, output with a timeout.
#include "forgek/core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>

extern char** environ;

namespace forgek {

bool SpawnProcess(const std::vector<std::string>& argv, const SpawnOptions& opts, pid_t* pid, std::string* err) {
  if (argv.empty()) {
    *err = "no command to start";
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  auto redirect = [&](int fd, const std::string& path, int target, int flags) {
    if (fd >= 0)
      posix_spawn_file_actions_adddup2(&actions, fd, target);
    else if (!path.empty())
      posix_spawn_file_actions_addopen(&actions, target, path.c_str(), flags, 0644);
  };
  redirect(opts.stdin_fd, opts.stdin_path, STDIN_FILENO, O_RDONLY);
  redirect(opts.stdout_fd, opts.stdout_path, STDOUT_FILENO, O_WRONLY | O_CREAT | O_TRUNC);
  redirect(opts.stderr_fd, opts.stderr_path, STDERR_FILENO, O_WRONLY | O_CREAT | O_TRUNC);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (opts.new_process_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv;
  for (std::string& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_copy = opts.environment;
  std::vector<char*> cenv;
  for (std::string& kv : env_copy) cenv.push_back(kv.data());
  cenv.push_back(nullptr);
  int rc = posix_spawn(pid, cargv[0], &actions, &attr, cargv.data(), opts.replace_environment ? cenv.data() : environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *err = std::strerror(rc);
    return false;
  }
  return true;
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

namespace {

// An in-memory file holding `data`, positioned at its start; -1 when one cannot be made.
int MemoryFileWith(const std::string& data) {
  int fd = memfd_create("forgek-stdin", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool WaitForChild(pid_t pid, double timeout_s, pid_t* ended, int* wait_status, std::string* err) {
  using Clock = std::chrono::steady_clock;
  const auto wait = std::chrono::duration<double>(std::max(0.0, timeout_s));
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(wait);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, timeout_s < 0 ? 0 : WNOHANG);
    if (r > 0) {
      *ended = r;
      *wait_status = status;
      return true;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = std::string("waitpid: ") + std::strerror(errno);
      return false;
    }
    if (Clock::now() >= deadline) {
      *err = "still running";
      return false;
    }
    usleep(20000);  // a child that is about to exit (the worker after a sticky error) takes milliseconds
  }
}

ProcessOutput RunProcess(const std::vector<std::string>& argv, double timeout_s) {
  ProcessOptions opts;
  opts.timeout_s = timeout_s;
  return RunProcess(argv, opts);
}

ProcessRun RunProcess(const std::vector<std::string>& argv, const ProcessOptions& opts) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  ProcessRun r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return r;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  int stdin_fd = -1;
  if (!opts.stdin_data.empty() && (stdin_fd = MemoryFileWith(opts.stdin_data)) < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    r.exit_code = 127;
    r.err = std::string("cannot hand the input to ") + argv.front() + ": " + std::strerror(errno);
    return r;
  }
  SpawnOptions spawn;
  spawn.stdin_fd = stdin_fd;
  spawn.stdout_fd = out_pipe[1];
  spawn.stderr_fd = err_pipe[1];
  spawn.new_process_group = opts.new_process_group;
  spawn.replace_environment = opts.replace_environment;
  spawn.environment = opts.environment;
  pid_t pid = -1;
  std::string why;
  const bool started = SpawnProcess(argv, spawn, &pid, &why);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (stdin_fd >= 0) close(stdin_fd);
  if (!started) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.exit_code = 127;
    r.err = "cannot start " + (argv.empty() ? std::string("nothing") : argv.front()) + ": " + why;
    return r;
  }
  r.started = true;
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(opts.timeout_s));
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  bool killed = false;
  auto kill_child = [&] {
    kill(pid, SIGKILL);
    killed = true;
  };
  while (open_fds > 0 && !killed) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill_child();
      break;
    }
    if (opts.should_stop && opts.should_stop()) {
      r.stopped = true;
      kill_child();
      break;
    }
    int wait_ms = static_cast<int>(std::min<long long>(left.count(), opts.should_stop ? 50 : left.count()));
    if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(p.fd);
        p.fd = -1;
        --open_fds;
        continue;
      }
      std::string& sink = &p == &fds[0] ? r.out : r.err;
      sink.append(buf, static_cast<size_t>(n));
      if (opts.max_output_bytes > 0 && sink.size() > opts.max_output_bytes) {
        r.overflowed = true;
        kill_child();
        break;
      }
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  int status = 0;  // stays 0 when the child cannot be waited for (SIGCHLD ignored): reaped by the kernel
  pid_t ended = -1;
  std::string wait_err;
  WaitForChild(pid, -1, &ended, &status, &wait_err);
  r.exit_code = ExitCodeOf(status);
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace forgek
