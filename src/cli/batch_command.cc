// `forgek batch OPS...`: several operators at once, one `forgek run` per free GPU, then a summary table.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "forgek/batch.h"
#include "forgek/gpu_list.h"
#include "forgek/paths.h"
#include "forgek/subprocess.h"
#include "forgek/worker_client.h"

namespace forgek::cli {
namespace {

struct BatchArgs {
  std::vector<std::string> ops;
  std::string gpus = "all";
  std::string log_dir;
  // Passed through to every run.
  std::string agent = "builtin";
  int iterations = 24;
  std::string time;
  int patience = 0;
  int batch = 4;
  uint64_t seed = 1;
  bool no_seal = false;
};

// Spawns `forgek [globals] --json run --op OP --gpus GPU, [run options]`, stdout to a file, stderr
// to the op's log.
class ProcessLauncher : public RunLauncher {
 public:
  ProcessLauncher(const Context& ctx, const BatchArgs& a, std::string log_dir)
      : ctx_(ctx), args_(a), log_dir_(std::move(log_dir)) {}

  bool Start(const std::string& op, int gpu, int* handle, std::string* err) override {
    std::vector<std::string> argv = {SelfExecutablePath()};
    if (!ctx_.store.empty()) argv.insert(argv.end(), {"--store", ctx_.store});
    if (!ctx_.operators_dir.empty()) argv.insert(argv.end(), {"--operators", ctx_.operators_dir});
    argv.insert(argv.end(), {"--arch", ctx_.arch, "--json", "run", "--op", op, "--gpus", std::to_string(gpu) + ",",
                             "--agent", args_.agent, "--iterations", std::to_string(args_.iterations), "--batch",
                             std::to_string(args_.batch), "--seed", std::to_string(args_.seed)});
    if (!args_.time.empty()) argv.insert(argv.end(), {"--time", args_.time});
    if (args_.patience > 0) argv.insert(argv.end(), {"--patience", std::to_string(args_.patience)});
    if (args_.no_seal) argv.push_back("--no-seal");

    std::string out_path = log_dir_ + "/" + op + ".json";
    std::string log_path = log_dir_ + "/" + op + ".log";
    SpawnOptions io;
    io.stdout_path = out_path;
    io.stderr_path = log_path;
    pid_t pid = -1;
    std::string why;
    if (!SpawnProcess(argv, io, &pid, &why)) {
      *err = "cannot start forgek run: " + why;
      return false;
    }
    *handle = static_cast<int>(pid);
    outputs_[*handle] = out_path;
    return true;
  }

  bool WaitAny(int* handle, int* exit_code, std::string* output, std::string* err) override {
    int status = 0;
    pid_t pid;
    do {
      pid = waitpid(-1, &status, 0);
    } while (pid < 0 && errno == EINTR);
    if (pid < 0) {
      *err = std::string("waitpid: ") + std::strerror(errno);
      return false;
    }
    *handle = static_cast<int>(pid);
    *exit_code = ExitCodeOf(status);
    std::ifstream f(outputs_[*handle]);
    std::stringstream ss;
    ss << f.rdbuf();
    *output = ss.str();
    return true;
  }

 private:
  const Context& ctx_;
  const BatchArgs& args_;
  std::string log_dir_;
  std::map<int, std::string> outputs_;
};

std::string DefaultLogDir() {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return DefaultCacheDir() + "/batch-" + stamp;
}

void Batch(Context& ctx, const BatchArgs& a) {
  std::vector<int> gpus;
  std::string err;
  {
    // The supervisor opens no CUDA context: a worker counts the devices.
    WorkerEvaluator prober;
    ProbeResult probe;
    if (!prober.Probe(&probe, &err) || !probe.ok)
      throw Failure("no usable GPU: " + (!err.empty() ? err : probe.error));
    if (!ParseGpuList(a.gpus, static_cast<int>(probe.devices.size()), &gpus, &err)) throw UsageError(err);
  }
  std::string log_dir = a.log_dir.empty() ? DefaultLogDir() : a.log_dir;
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) throw Failure("cannot create the log folder " + log_dir + ": " + ec.message());
  spdlog::info("batch: {} operators on {} GPU(s); each run's log and summary in {}", a.ops.size(), gpus.size(), log_dir);
  ProcessLauncher launcher(ctx, a, log_dir);
  auto start = std::chrono::steady_clock::now();
  std::vector<BatchRunResult> results =
      RunBatch(a.ops, gpus, launcher, [](const std::string& line) { spdlog::info("{}", line); });
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ctx.json)
    std::printf("%s\n", BatchSummaryJson(results, wall).c_str());
  else
    std::printf("%s", BatchSummaryText(results, wall).c_str());
  for (const BatchRunResult& r : results)
    if (!r.error.empty() || r.exit_code != 0) ctx.exit_code = kExitFailure;
}

}  // namespace

void set_batch_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "batch", "Run several operators at once, one run per free GPU, continuing after failures; ends with a table");
  cmd->add_option("OPS", a->ops, "Operator names or aliases")->required();
  cmd->add_option("--gpus", a->gpus, "GPUs to use: all, a count (2) or indices (0,2 or 3,)")
      ->check(GpuListSyntax())
      ->capture_default_str();
  cmd->add_option("--log-dir", a->log_dir, "Folder for each run's log and JSON summary (default under the cache)");
  cmd->add_option("--agent", a->agent, "Agent of every run")->check(CLI::IsMember({"builtin"}))->capture_default_str();
  cmd->add_option("--iterations", a->iterations, "Candidates per run")
      ->check(WholeNumber(0, kMaxIterations))
      ->capture_default_str();
  cmd->add_option("--time", a->time, "Wall-time budget per run: 90, 90s, 15m, 1h");
  cmd->add_option("--patience", a->patience, "Stop a run after this many candidates without a new best")
      ->check(WholeNumber(0, kMaxIterations));
  cmd->add_option("--batch", a->batch, "Proposals compiled in parallel per agent call")->check(CLI::Range(1, 64));
  cmd->add_option("--seed", a->seed, "Seed of the builtin agent's search");
  cmd->add_flag("--no-seal", a->no_seal, "Never seal");
  cmd->callback([&ctx, a] { Batch(ctx, *a); });
}

}  // namespace forgek::cli
