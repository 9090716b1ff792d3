// Running a piece of a test where file permissions bind, also when the tests run as root (CI
// containers do): permission tests that skipped under root now run there too.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace forgek {

// The uid and gid a root test drops to: nobody on Debian and Ubuntu.
inline constexpr uid_t kUnprivilegedId = 65534;

// Runs `body` as root's child that has become `uid` (gid the same; no supplementary groups) and returns
// its text (through a pipe). "cannot drop root: ..." when the test does not run as root or the child
// cannot switch.
inline std::string AsUser(uid_t uid, const std::function<std::string()>& body) {
  if (geteuid() != 0) return "cannot drop root: the test does not run as root";
  int fds[2];
  if (pipe(fds) != 0) return "cannot drop root: pipe failed";
  pid_t pid = fork();
  if (pid < 0) return "cannot drop root: fork failed";
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
      out = "cannot drop root: setuid failed";
    else
      out = body();
    size_t at = 0;
    while (at < out.size()) {
      ssize_t n = write(fds[1], out.data() + at, out.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return text;
}

// Runs `body` and returns its text: directly for an ordinary user; as root, AsUser(kUnprivilegedId).
// The folders `body` uses must be reachable by that user.
inline std::string AsUnprivileged(const std::function<std::string()>& body) {
  return geteuid() != 0 ? body() : AsUser(kUnprivilegedId, body);
}

}  // namespace forgek
