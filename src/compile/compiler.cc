// The compile service: cache lookup, NVRTC with precompiled headers and a deadline, a thread pool.
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "compile_cache.h"
#include "compile_child.h"
#include "compile_log.h"
#include "include_check.h"
#include "landlock.h"
#include "nvrtc_program.h"
#include "forgek/compile/compile.h"
#include "forgek/compile/compile_worker.h"
#include "forgek/core/device_library.h"
#include "forgek/core/paths.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

// What the store, the terminal and a provider get of a program log: its head.
constexpr size_t kMaxKeptLogBytes = 64u << 10;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

CompileMessage ErrorMessage(std::string text) {
  CompileMessage m;
  m.severity = "error";
  m.message = std::move(text);
  return m;
}

// A failed compile that reports an error located in the candidate itself failed for the
// candidate's reasons; anything else might be the precompiled header's fault.
bool FailedInOwnSource(const NvrtcRun& run, const std::string& name) {
  if (run.status != NVRTC_ERROR_COMPILATION) return false;
  for (const CompileMessage& m : ParseCompileMessages(run.log))
    if (m.severity == "error" && m.file == name && m.line > 0) return true;
  return false;
}

ChildLimits LimitsFor(const CompilerOptions& opts, bool pch_usable) {
  ChildLimits limits;
  limits.command = opts.worker_command;
  if (limits.command.empty()) limits.command = {SelfExecutablePath(), kCompileWorkerCommand};
  limits.read_folders.push_back(opts.cuda_root);
  for (const std::string& dir : opts.include_dirs) limits.read_folders.push_back(dir);
  if (pch_usable) limits.write_folders.push_back(opts.pch_dir);
  limits.allow_unconfined = opts.allow_unconfined || UnconfinedCompileAllowedByEnvironment();
  limits.address_space_bytes = opts.memory_limit_bytes;
  return limits;
}

}  // namespace

struct Compiler::Impl {
  struct Job {
    CompileRequest request;
    std::promise<CompileResult> promise;
  };

  CompilerOptions opts;
  CompileCache cache;
  bool pch_usable = false;
  ChildLimits limits;
  std::once_flag unconfined_warning;
  std::atomic<bool> stopping{false};

  std::mutex mu;
  std::condition_variable wake;
  std::deque<Job> queue;
  std::vector<std::thread> threads;

  explicit Impl(CompilerOptions o) : opts(std::move(o)), cache(opts.cache_dir) {
    if (!opts.pch_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(opts.pch_dir, ec);
      pch_usable = std::filesystem::is_directory(opts.pch_dir, ec);
      if (!pch_usable) spdlog::warn("precompiled headers off: cannot create {}", opts.pch_dir);
    }
    limits = LimitsFor(opts, pch_usable);
    int n = opts.threads > 0 ? opts.threads : static_cast<int>(std::thread::hardware_concurrency());
    for (int i = 0; i < std::max(n, 1); ++i) threads.emplace_back([this] { WorkLoop(); });
  }

  ~Impl() {
    std::deque<Job> dropped;
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
      dropped.swap(queue);
    }
    wake.notify_all();
    for (Job& job : dropped) {
      CompileResult r;
      r.messages.push_back(ErrorMessage("the compiler shut down before this compile started"));
      job.promise.set_value(std::move(r));
    }
    for (std::thread& t : threads) t.join();
  }

  void WorkLoop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      job.promise.set_value(CompileGuarded(job.request));
    }
  }

  // The pool's promise must always be fulfilled with a value.
  CompileResult CompileGuarded(const CompileRequest& req) {
    try {
      return Compile(req);
    } catch (const std::exception& e) {
      CompileResult r;
      r.messages.push_back(ErrorMessage(std::string("internal error while compiling: ") + e.what()));
      return r;
    }
  }

  CompileResult Compile(const CompileRequest& req) {
    Clock::time_point start = Clock::now();
    CompileResult result;
    std::string target;
    if (!ArchToNvrtcTarget(req.arch, &target)) {
      result.messages.push_back(ErrorMessage("unknown architecture '" + req.arch + "': use sm90 or sm100"));
      return result;
    }
    result.messages = CheckIncludes(req.source, req.name);
    if (!result.messages.empty()) return result;
    // NVRTC sees the candidate with the device library's headers expanded into it: the same text
    // forgek hashes, stores and seals.
    std::string source;
    ExpandError expand_error;
    if (!ExpandDeviceLibrary(req.source, &source, &expand_error)) {
      CompileMessage m = ErrorMessage(expand_error.message);
      m.file = req.name;
      m.line = expand_error.line;
      m.column = expand_error.column;
      result.messages.push_back(std::move(m));
      return result;
    }
    std::vector<std::string> options = BaseNvrtcOptions(target, opts.cuda_root);
    for (const std::string& dir : opts.include_dirs) options.push_back("-I" + dir);
    options.insert(options.end(), req.options.begin(), req.options.end());
    result.key = CompileKey(source, options, Compiler::NvrtcVersion(), target);
    if (cache.Load(result.key, &result)) {
      result.cache_hit = true;
      result.log = QuoteOnlyOwnLines(result.log, req.name, kMaxKeptLogBytes);  // entries of older versions
      result.seconds = SecondsSince(start);
      return result;
    }

    ChildRun child = RunWithDeadline(req, source, options, start);
    result.seconds = SecondsSince(start);
    // A deadline, a crash or a limit is no verdict of the compiler's on the source: never cached.
    if (child.stopped || child.timed_out) {
      result.timed_out = child.timed_out && !stopping;
      result.messages.push_back(ErrorMessage(result.timed_out ? "compile exceeded " + FormatSeconds(req.timeout_s) + "s"
                                                              : "the compiler shut down during this compile"));
      return result;
    }
    if (!child.failure.empty()) {
      result.messages.push_back(ErrorMessage(child.failure));
      return result;
    }
    if (child.landlock_abi == 0)
      std::call_once(unconfined_warning, [] {
        spdlog::warn("compiling without confinement (FORGEK_UNCONFINED_COMPILE=1): a candidate's #include can read "
                     "any file forgek can");
      });
    NvrtcRun& run = child.run;
    result.log = QuoteOnlyOwnLines(run.log, req.name, kMaxKeptLogBytes);
    result.cubin = std::move(run.cubin);
    result.ok = run.ok;
    result.messages = ParseCompileMessages(result.log);
    result.kernels = ParsePtxasReport(result.log);
    if (!run.ok && result.messages.empty())
      result.messages.push_back(ErrorMessage("NVRTC failed: " + run.status_text));
    // Only the compiler's verdict on the source is worth keeping; an NVRTC malfunction is not.
    if (run.ok || run.status == NVRTC_ERROR_COMPILATION) {
      std::string err;
      if (!cache.Store(result.key, result, &err)) spdlog::warn("compile cache: {}", err);
    }
    return result;
  }

  ChildRun RunWithDeadline(const CompileRequest& req, const std::string& source, const std::vector<std::string>& options,
                           Clock::time_point start) {
    std::function<bool()> should_stop = [this] { return stopping.load(); };
    auto run_once = [&](const std::vector<std::string>& with) {
      ChildLimits l = limits;
      l.timeout_s = req.timeout_s > 0 ? std::max(req.timeout_s - SecondsSince(start), 0.001) : 0;
      return CompileInChild(req.name, source, with, l, should_stop);
    };
    if (!pch_usable) return run_once(options);

    std::vector<std::string> with_pch = options;
    for (std::string& o : PchNvrtcOptions(opts.pch_dir)) with_pch.push_back(std::move(o));
    ChildRun child = run_once(with_pch);
    if (child.stopped || child.timed_out || !child.failure.empty() || child.run.ok ||
        FailedInOwnSource(child.run, req.name))
      return child;
    spdlog::debug("compile of {} with precompiled headers failed ({}); retrying without", req.name,
                  child.run.status_text);
    return run_once(options);
  }
};

int CompileConfinementAbi() { return LandlockAbi(); }

bool UnconfinedCompileAllowedByEnvironment() {
  const char* v = std::getenv("FORGEK_UNCONFINED_COMPILE");
  return v && std::string(v) == "1";
}

Compiler::Compiler(CompilerOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}

Compiler::~Compiler() = default;

std::future<CompileResult> Compiler::Submit(CompileRequest req) {
  Impl::Job job{std::move(req), {}};
  std::future<CompileResult> future = job.promise.get_future();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->queue.push_back(std::move(job));
  }
  impl_->wake.notify_one();
  return future;
}

CompileResult Compiler::CompileNow(const CompileRequest& req) { return impl_->CompileGuarded(req); }

}  // namespace forgek
