// The batch scheduler: a queue of operators, a set of GPUs, one run per free GPU.
#include "forgek/core/json_parse.h"
#include "forgek/run/batch.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>

#include <nlohmann/json.hpp>

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  size_t index;
  int gpu;
  Clock::time_point started;
};

}  // namespace

std::vector<BatchRunResult> RunBatch(const std::vector<std::string>& ops, const std::vector<int>& gpus,
                                     RunLauncher& launcher, const std::function<void(const std::string&)>& progress) {
  std::vector<BatchRunResult> results(ops.size());
  std::deque<size_t> queue;
  for (size_t i = 0; i < ops.size(); ++i) {
    results[i].op = ops[i];
    queue.push_back(i);
  }
  std::deque<int> free_gpus(gpus.begin(), gpus.end());
  std::map<int, Running> running;  // handle -> run
  size_t done = 0;
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  while (done < ops.size()) {
    while (!queue.empty() && !free_gpus.empty()) {
      size_t i = queue.front();
      queue.pop_front();
      int gpu = free_gpus.front();
      int handle = -1;
      std::string err;
      results[i].gpu = gpu;
      if (!launcher.Start(ops[i], gpu, &handle, &err)) {
        results[i].error = err;
        ++done;
        say("[" + std::to_string(done) + "/" + std::to_string(ops.size()) + "] " + ops[i] + " could not start: " + err);
        continue;  // the GPU stays free for the next operator
      }
      free_gpus.pop_front();
      running[handle] = {i, gpu, Clock::now()};
      say(ops[i] + " started on GPU " + std::to_string(gpu));
    }
    if (running.empty()) break;  // nothing left that can start
    int handle = -1, code = -1;
    std::string output, err;
    if (!launcher.WaitAny(&handle, &code, &output, &err) || !running.count(handle)) {
      // The launcher lost track of its runs: mark the rest failed rather than wait forever.
      for (auto& [h, r] : running) {
        results[r.index].error = err.empty() ? "lost track of the run" : err;
        ++done;
      }
      running.clear();
      for (size_t i : queue) {
        results[i].error = "not started: the batch stopped";
        ++done;
      }
      queue.clear();
      break;
    }
    Running r = running[handle];
    running.erase(handle);
    free_gpus.push_back(r.gpu);
    BatchRunResult& res = results[r.index];
    res.exit_code = code;
    res.output = output;
    res.wall_s = std::chrono::duration<double>(Clock::now() - r.started).count();
    ++done;
    char line[256];
    std::snprintf(line, sizeof line, "[%zu/%zu] %s on GPU %d ended (exit %d) after %.1f s", done, ops.size(),
                  res.op.c_str(), r.gpu, code, res.wall_s);
    say(line);
  }
  return results;
}

namespace {

struct Parsed {
  int attempts = 0;
  double best = 0;
  std::string seal;
};

Parsed ParseSummary(const std::string& output) {
  Parsed p;
  nlohmann::json j = ParseJsonLenient(output);
  if (!j.is_object()) return p;
  p.attempts = j.value("attempts", 0);
  if (j.contains("best") && j["best"].is_object()) p.best = j["best"].value("speedup", 0.0);
  if (j.contains("seal") && j["seal"].is_string()) p.seal = j["seal"].get<std::string>();
  return p;
}

std::string Status(const BatchRunResult& r) {
  if (!r.error.empty()) return "not run";
  return r.exit_code == 0 ? "ok" : "failed (" + std::to_string(r.exit_code) + ")";
}

}  // namespace

std::string BatchSummaryText(const std::vector<BatchRunResult>& results, double wall_s) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-26s %4s %-12s %8s %9s %-14s %8s\n", "operator", "gpu", "status", "attempts",
                "best", "seal", "wall s");
  out += line;
  int ok = 0;
  for (const BatchRunResult& r : results) {
    Parsed p = ParseSummary(r.output);
    ok += r.error.empty() && r.exit_code == 0;
    std::snprintf(line, sizeof line, "%-26s %4d %-12s %8d %8.3fx %-14s %8.1f%s%s\n", r.op.c_str(), r.gpu,
                  Status(r).c_str(), p.attempts, p.best, p.seal.empty() ? "-" : p.seal.substr(0, 12).c_str(), r.wall_s,
                  r.error.empty() ? "" : "  ", r.error.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%d of %zu runs ok, %.1f s wall\n", ok, results.size(), wall_s);
  out += line;
  return out;
}

std::string BatchSummaryJson(const std::vector<BatchRunResult>& results, double wall_s) {
  nlohmann::json runs = nlohmann::json::array();
  for (const BatchRunResult& r : results) {
    nlohmann::json summary = ParseJsonLenient(r.output);
    runs.push_back({{"operator", r.op},
                    {"gpu", r.gpu},
                    {"exit_code", r.exit_code},
                    {"error", r.error},
                    {"wall_s", r.wall_s},
                    {"summary", summary.is_discarded() ? nlohmann::json(nullptr) : summary}});
  }
  return nlohmann::json{{"runs", runs}, {"wall_s", wall_s}}.dump(2);
}

}  // namespace forgek
