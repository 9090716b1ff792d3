// Starting and watching the compile child; its way of ending becomes the candidate's reason.
#include "compile_child.h"

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "compile_wire.h"
#include "forgek/core/subprocess.h"

extern char** environ;

namespace forgek {
namespace {

// A cubin of the largest shipped kernel is a few MiB; the log is cut at 1 MiB by the child.
constexpr size_t kMaxReplyBytes = 512u << 20;
// Child stderr is read only for the debug log of a failure.
constexpr size_t kMaxStderrShown = 400;
// The CPU limit backs up the wall deadline in case the parent cannot kill in time.
constexpr double kCpuSlackSeconds = 5;

std::string GiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

// Why a child that died by `sig` gave no answer.
std::string CrashReason(int sig, const ChildLimits& limits) {
  std::string name = sigabbrev_np(sig) ? std::string("SIG") + sigabbrev_np(sig) : "signal " + std::to_string(sig);
  std::string why = "the compiler crashed (" + name + ") on this source";
  if (sig == SIGSEGV || sig == SIGBUS)
    why += ": NVRTC's front end ran out of stack or memory (macro or template expansion nested too deeply?)";
  else if (sig == SIGABRT && limits.address_space_bytes > 0)
    why += ": it may have run out of its " + GiB(limits.address_space_bytes) + " of memory";
  return why;
}

}  // namespace

std::vector<std::string> CompileChildEnvironment() {
  static const char* const kKept[] = {"LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    for (const char* name : kKept) {
      size_t n = std::strlen(name);
      if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') env.emplace_back(*e);
    }
  }
  return env;
}

ChildRun CompileInChild(const std::string& name, const std::string& source, const std::vector<std::string>& options,
                        const ChildLimits& limits, const std::function<bool()>& should_stop) {
  ChildRun out;
  ChildCompileRequest req;
  req.name = name;
  req.source = source;
  req.options = options;
  req.read_folders = limits.read_folders;
  req.write_folders = limits.write_folders;
  req.allow_unconfined = limits.allow_unconfined;
  req.address_space_bytes = limits.address_space_bytes;
  req.stack_bytes = limits.stack_bytes;
  req.cpu_seconds = limits.timeout_s > 0 ? static_cast<uint64_t>(std::ceil(limits.timeout_s + kCpuSlackSeconds)) : 0;

  ProcessOptions run;
  run.stdin_data = EncodeRequest(req);
  run.timeout_s = limits.timeout_s > 0 ? limits.timeout_s : 1e9;
  run.new_process_group = true;  // a Ctrl-C at the terminal is forgek's to handle, not the compiler's
  run.replace_environment = true;
  run.environment = CompileChildEnvironment();
  run.max_output_bytes = kMaxReplyBytes;
  run.should_stop = should_stop;
  ProcessRun child = RunProcess(limits.command, run);

  if (!child.started) {
    out.failure = "cannot start the compile process: " + child.err;
    return out;
  }
  if (child.stopped) {
    out.stopped = true;
    return out;
  }
  if (child.timed_out || child.signal == SIGXCPU) {
    out.timed_out = true;
    return out;
  }
  if (child.overflowed) {
    out.failure = "the compiler's output passed " + GiB(kMaxReplyBytes) + "; the compile was stopped";
    return out;
  }
  if (child.signal != 0) {
    // RLIMIT_CPU's hard limit ends with SIGKILL; no one else kills a compile child.
    out.timed_out = child.signal == SIGKILL && child.seconds >= limits.timeout_s;
    if (!out.timed_out) out.failure = CrashReason(child.signal, limits);
    return out;
  }
  ChildCompileReply reply;
  std::string err;
  if (!DecodeReply(child.out, &reply, &err)) {
    out.failure = "the compile process exited " + std::to_string(child.exit_code) + " without an answer (" + err +
                  ")" + (child.err.empty() ? "" : ": " + child.err.substr(0, kMaxStderrShown));
    return out;
  }
  if (!reply.error.empty()) {
    out.failure = reply.error;
    return out;
  }
  out.run = std::move(reply.run);
  out.landlock_abi = reply.landlock_abi;
  return out;
}

}  // namespace forgek
