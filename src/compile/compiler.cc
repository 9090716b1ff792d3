// The compile service: cache lookup, NVRTC with precompiled headers and a deadline, a thread pool.
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "compile/compile_cache.h"
#include "compile/compile_log.h"
#include "compile/nvrtc_program.h"
#include "forgek/compile.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

struct Compiler::Impl {
  struct Job {
    CompileRequest request;
    std::promise<CompileResult> promise;
  };

  CompilerOptions opts;
  CompileCache cache;
  bool pch_usable = false;
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
    std::vector<std::string> options = BaseNvrtcOptions(target, opts.cuda_root);
    options.insert(options.end(), req.options.begin(), req.options.end());
    result.key = CompileKey(req.source, options, Compiler::NvrtcVersion(), target);
    if (cache.Load(result.key, &result)) {
      result.cache_hit = true;
      result.seconds = SecondsSince(start);
      return result;
    }

    NvrtcRun run = RunWithDeadline(req, options, start);
    result.log = run.log;
    result.cubin = std::move(run.cubin);
    result.ok = run.ok;
    result.messages = ParseCompileMessages(result.log);
    result.kernels = ParsePtxasReport(result.log);
    result.seconds = SecondsSince(start);
    if (run.cancelled) {
      result.ok = false;
      result.cubin.clear();
      result.timed_out = !stopping;
      result.messages.push_back(ErrorMessage(result.timed_out ? "compile exceeded " + FormatSeconds(req.timeout_s) + "s"
                                                              : "the compiler shut down during this compile"));
      return result;  // a deadline is no property of the source: never cached
    }
    if (!run.ok && result.messages.empty())
      result.messages.push_back(ErrorMessage("NVRTC failed: " + run.status_text));
    // Only the compiler's verdict on the source is worth keeping; an NVRTC malfunction is not.
    if (run.ok || run.status == NVRTC_ERROR_COMPILATION) {
      std::string err;
      if (!cache.Store(result.key, result, &err)) spdlog::warn("compile cache: {}", err);
    }
    return result;
  }

  NvrtcRun RunWithDeadline(const CompileRequest& req, const std::vector<std::string>& options,
                           Clock::time_point start) {
    bool has_deadline = req.timeout_s > 0;
    Clock::time_point deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(has_deadline ? req.timeout_s : 0));
    std::function<bool()> should_stop = [this, has_deadline, deadline] {
      return stopping.load() || (has_deadline && Clock::now() > deadline);
    };
    if (!pch_usable) return RunNvrtc(req.name, req.source, options, should_stop);

    std::vector<std::string> with_pch = options;
    for (std::string& o : PchNvrtcOptions(opts.pch_dir)) with_pch.push_back(std::move(o));
    NvrtcRun run = RunNvrtc(req.name, req.source, with_pch, should_stop);
    if (run.ok || run.cancelled || FailedInOwnSource(run, req.name)) return run;
    spdlog::debug("compile of {} with precompiled headers failed ({}); retrying without", req.name, run.status_text);
    return RunNvrtc(req.name, req.source, options, should_stop);
  }
};

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
