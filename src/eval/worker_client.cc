// Spawning the GPU worker and talking to it under a watchdog.
#include "forgek/eval/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>

#include <spdlog/spdlog.h>

#include "forgek/core/paths.h"
#include "forgek/core/subprocess.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    // A socket rather than a pipe: MSG_NOSIGNAL turns a dead worker into EPIPE, not SIGPIPE.
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("worker killed by signal ") + strsignal(WTERMSIG(status));
  return "worker ended";
}

}  // namespace

// The worker's stderr, read by a thread: logged at debug level, the tail kept for crash reports.
struct WorkerClient::StderrLog {
  std::mutex mu;
  std::deque<std::string> lines;
  void Add(std::string line) {
    spdlog::debug("worker: {}", line);
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(std::move(line));
    if (lines.size() > 20) lines.pop_front();
  }
};

std::vector<std::string> DefaultWorkerCommand() { return {SelfExecutablePath(), "worker"}; }

WorkerClient::WorkerClient(std::vector<std::string> command)
    : command_(std::move(command)), stderr_log_(std::make_shared<StderrLog>()) {}

WorkerClient::~WorkerClient() {
  if (running()) {
    WriteAll(to_worker_, EncodeLine({{"id", next_id_++}, {"type", "shutdown"}}));
    std::string line;
    bool timed_out = false;
    ReadLine(2.0, &line, &timed_out);
  }
  Reap(true);
}

std::string WorkerClient::StderrTail() const {
  std::lock_guard<std::mutex> lock(stderr_log_->mu);
  std::string out;
  for (const std::string& l : stderr_log_->lines) out += l + "\n";
  return out;
}

bool WorkerClient::Spawn(std::string* err) {
  int in_pair[2], out_pair[2], err_pipe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) return *err = strerror(errno), false;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out_pair) != 0) {
    close(in_pair[0]), close(in_pair[1]);
    return *err = strerror(errno), false;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(in_pair[0]), close(in_pair[1]), close(out_pair[0]), close(out_pair[1]);
    return *err = strerror(errno), false;
  }
  // Its own process group, so that the watchdog's SIGKILL reaches anything the worker started.
  SpawnOptions io;
  io.stdin_fd = in_pair[1];
  io.stdout_fd = out_pair[1];
  io.stderr_fd = err_pipe[1];
  io.new_process_group = true;
  pid_t pid = -1;
  std::string why;
  const bool started = SpawnProcess(command_, io, &pid, &why);
  close(in_pair[1]), close(out_pair[1]), close(err_pipe[1]);
  if (!started) {
    close(in_pair[0]), close(out_pair[0]), close(err_pipe[0]);
    *err = "cannot start the worker (" + command_[0] + "): " + why;
    return false;
  }
  pid_ = pid;
  to_worker_ = in_pair[0];
  from_worker_ = out_pair[0];
  stderr_fd_ = err_pipe[0];
  buffer_.clear();
  ++spawns_;
  {
    std::lock_guard<std::mutex> lock(stderr_log_->mu);
    stderr_log_->lines.clear();
  }
  stderr_thread_ = std::thread([fd = stderr_fd_, log = stderr_log_] {
    std::string pending;
    char chunk[4096];
    for (;;) {
      ssize_t n = read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(chunk, static_cast<size_t>(n));
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
        log->Add(pending.substr(0, nl));
    }
    if (!pending.empty()) log->Add(pending);
  });
  spdlog::debug("started worker pid {}", pid_);
  return true;
}

bool WorkerClient::ReadLine(double timeout_s, std::string* line, bool* timed_out) {
  *timed_out = false;
  auto start = Clock::now();
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    double left = timeout_s - SecondsSince(start);
    if (left <= 0) {
      *timed_out = true;
      return false;
    }
    pollfd p{from_worker_, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return false;
    if (rc == 0) continue;
    char chunk[65536];
    ssize_t n = read(from_worker_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EOF: the worker closed its stdout or died
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string WorkerClient::Reap(bool kill_first) {
  if (pid_ <= 0) return "worker not running";
  if (kill_first) kill(-pid_, SIGKILL);
  int status = 0;
  pid_t ended = -1;
  std::string how = "worker ended", why;
  if (WaitForChild(pid_, -1, &ended, &status, &why)) how = DescribeExit(status);
  pid_ = -1;
  CloseChannels();
  return how;
}

void WorkerClient::CloseChannels() {
  for (int* fd : {&to_worker_, &from_worker_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  if (stderr_thread_.joinable()) stderr_thread_.join();  // ends at EOF: the worker is gone
  if (stderr_fd_ >= 0) close(stderr_fd_);
  stderr_fd_ = -1;
}

std::string WorkerClient::Kill() { return Reap(true); }

WorkerClient::Reply WorkerClient::Call(const std::string& type, const nlohmann::json& fields, double deadline_s,
                                       double bound_s) {
  const auto call_start = Clock::now();
  Reply reply;
  if (!running()) {
    std::string err;
    if (!Spawn(&err)) {
      reply.status = Status::spawn_error;
      reply.detail = err;
      return reply;
    }
  }
  int64_t id = next_id_++;
  nlohmann::json request = fields.is_object() ? fields : nlohmann::json::object();
  request["id"] = id;
  request["type"] = type;
  auto died = [&](const std::string& what) {
    // Give the worker a moment to exit by itself (it does after a sticky error), then reap.
    std::string how, why;
    int status = 0;
    pid_t ended = -1;
    if (pid_ > 0 && WaitForChild(pid_, 1.0, &ended, &status, &why)) {
      how = DescribeExit(status);
      kill(-pid_, SIGKILL);  // stragglers of its group would hold its stderr open
      pid_ = -1;
      CloseChannels();
    }
    if (pid_ > 0) how = Reap(true);
    reply.status = Status::died;
    reply.detail = what + (how.empty() ? "" : ": " + how);
    std::string tail = StderrTail();
    if (!tail.empty()) reply.detail += "\nworker stderr:\n" + tail;
    return reply;
  };
  if (!WriteAll(to_worker_, EncodeLine(request))) return died("could not send the " + type + " request");
  double step_budget = deadline_s;
  std::string step = "waiting for the first reply";
  for (;;) {
    std::string line;
    bool timed_out = false;
    auto step_start = Clock::now();
    // The call's own bound, when it comes before the step's deadline, is what the wait may take.
    const double bound_left = bound_s > 0 ? bound_s - SecondsSince(call_start) : step_budget;
    const bool bounded = bound_left < step_budget;
    if (!ReadLine(std::max(0.0, std::min(step_budget, bound_left)), &line, &timed_out)) {
      if (!timed_out) return died("worker died during " + type + " (" + step + ")");
      std::string how = Kill();
      reply.status = Status::timeout;
      reply.detail = bounded ? type + ": " + step + " cut at the call's bound of " + fmt::format("{:.1f}", bound_s) +
                                   " s; worker killed"
                             : type + ": " + step + " did not finish within " +
                                   fmt::format("{:.1f}", SecondsSince(step_start)) + " s; worker killed";
      return reply;
    }
    nlohmann::json msg;
    std::string err;
    if (!DecodeMessageLine(line, &msg, &err)) {
      spdlog::warn("worker wrote a malformed line: {}", err);
      continue;  // stray output cannot be a reply; the deadline still applies
    }
    if (msg["id"].get<int64_t>() != id) {
      spdlog::warn("worker replied to request {} while {} was pending", msg["id"].get<int64_t>(), id);
      continue;
    }
    if (msg["type"] == "progress") {
      step = StringField(msg, "step", "a step");
      step_budget = deadline_s + std::max(0.0, NumberField(msg, "budget_s", 0.0));
      continue;
    }
    if (msg["type"] != "reply") {
      reply.status = Status::protocol_error;
      reply.detail = "unexpected message type " + msg["type"].dump();
      return reply;
    }
    reply.body = std::move(msg);
    return reply;
  }
}

}  // namespace forgek
