// Child processes over posix_spawn: redirected streams, process groups, output with a timeout.
#include "forgek/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
  int rc = posix_spawn(pid, cargv[0], &actions, &attr, cargv.data(), environ);
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

ProcessOutput RunProcess(const std::vector<std::string>& argv, double timeout_s) {
  ProcessOutput r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return r;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  SpawnOptions opts;
  opts.stdout_fd = out_pipe[1];
  opts.stderr_fd = err_pipe[1];
  pid_t pid = -1;
  std::string why;
  const bool started = SpawnProcess(argv, opts, &pid, &why);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!started) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.exit_code = 127;
    r.err = "cannot start " + argv.front() + ": " + why;
    return r;
  }
  r.started = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        close(p.fd);
        p.fd = -1;
        --open_fds;
      } else {
        (&p == &fds[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = ExitCodeOf(status);
  return r;
}

}  // namespace forgek
