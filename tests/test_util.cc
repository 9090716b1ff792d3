// Implementation of the shared test helpers.
#include "test_util.h"

#include "forgek/core/paths.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace forgek {

std::string ForgekBinary() {
  if (const char* env = std::getenv("FORGEK_BIN")) return env;
  std::string self = SelfExecutablePath();
  std::string sibling = self.substr(0, self.rfind('/') + 1) + "forgek";
  if (access(sibling.c_str(), X_OK) == 0) return sibling;
  return FORGEK_BINARY;
}

namespace {

// Runs the binary; `on_stderr` (when set) sees the child's pid and the stderr read so far.
CommandResult RunChild(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const std::string& stdin_text, const std::function<void(pid_t, const std::string&)>& on_stderr) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) || pipe(out_pipe) || pipe(err_pipe)) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    for (const std::string& kv : env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> argv;
    std::string bin = ForgekBinary();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!stdin_text.empty()) {
    ssize_t unused = write(in_pipe[1], stdin_text.data(), stdin_text.size());
    (void)unused;
  }
  close(in_pipe[1]);
  CommandResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
        if (i == 1 && on_stderr) on_stderr(pid, r.err);
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace

CommandResult RunForgek(const std::vector<std::string>& args, const std::vector<std::string>& env,
                        const std::string& stdin_text) {
  return RunChild(args, env, stdin_text, nullptr);
}

CommandResult RunForgekSignalled(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                 int signo, const std::string& after) {
  bool sent = false;
  return RunChild(args, env, "", [&](pid_t pid, const std::string& err) {
    if (sent || err.find(after) == std::string::npos) return;
    kill(pid, signo);
    sent = true;
  });
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "forgek-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string FindInPath(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / tool;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// The tree the tests were built from, or FORGEK_SOURCE_DIR when set (the GPU machine runs the
// binaries over a copy of the tree at another path).
std::string SourceDir() {
  const char* dir = std::getenv("FORGEK_SOURCE_DIR");
  return dir && *dir ? dir : FORGEK_SOURCE_DIR;
}

}  // namespace forgek
