// `forgek batch OPS...`: several operators at once, one `forgek run` per free GPU, then a summary table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "forgek/core/atomic_file.h"
#include "load_operator.h"
#include "option_checks.h"
#include "output_path.h"
#include "forgek/core/file_read.h"
#include "forgek/core/json_parse.h"
#include "forgek/run/batch.h"
#include "forgek/run/budget.h"
#include "forgek/run/gpu_list.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/report/scoreboard.h"
#include "forgek/run/scoreboard.h"
#include "forgek/knowledge/store.h"
#include "forgek/core/subprocess.h"
#include "forgek/eval/worker_client.h"

namespace forgek::cli {
namespace {

struct BatchArgs {
  std::vector<std::string> ops;
  bool all = false;            // every operator of the suite
  std::string time_per_op;     // the total is this times the operators, split by headroom
  std::string headroom_from;   // `forgek --json ops bench` output: SOL % where the store knows none
  double floor_s = 60;         // every run's share starts with this (incumbent analysis, confirmation)
  std::string scoreboard_md, scoreboard_json;
  bool iterations_given = false;
  std::vector<BudgetShare> shares;  // each run's share of the time budget (empty: none)
  std::string gpus = "all";
  std::string log_dir;
  // Passed through to every run.
  std::string agent = "builtin";
  int iterations = 24;
  std::string time;  // the batch's total wall-time budget, split by headroom
  int patience = 0;
  int batch = 4;
  uint64_t seed = 1;
  bool no_seal = false;
  bool no_torch = false;
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
    const BatchRunBudget budget = RunBudgetOf(args_.shares, op, args_.iterations, args_.iterations_given);
    argv.insert(argv.end(), {"--arch", ctx_.arch, "--json", "run", "--op", op, "--gpus", std::to_string(gpu) + ",",
                             "--agent", args_.agent, "--iterations", std::to_string(budget.iterations), "--batch",
                             std::to_string(args_.batch), "--seed", std::to_string(args_.seed)});
    if (budget.time_s > 0) argv.insert(argv.end(), {"--time", std::to_string(budget.time_s) + "s"});
    if (args_.patience > 0) argv.insert(argv.end(), {"--patience", std::to_string(args_.patience)});
    if (args_.no_seal) argv.push_back("--no-seal");
    if (args_.no_torch) argv.push_back("--no-torch");

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
    pid_t pid = -1;
    if (!WaitForChild(-1, -1, &pid, &status, err)) return false;
    *handle = static_cast<int>(pid);
    *exit_code = ExitCodeOf(status);
    // The run's JSON summary: a missing or oversized one is an empty output, which the batch reports.
    std::string why;
    if (!ReadFileLimited(outputs_[*handle], kJsonMaxBytes, "a run's summary", output, &why)) output->clear();
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
  return CacheDir("") + "/batch-" + stamp;
}

// Per operator, the geomean SOL % of its configs in an `ops bench` JSON file ({"rows": [...]}).
std::map<std::string, double> BenchSol(const std::string& path) {
  std::map<std::string, double> sol;
  if (path.empty()) return sol;
  std::string why;
  if (!IsReadableFile(path, &why)) throw UsageError("--headroom-from " + path + ": it " + why);
  std::string text;
  if (!ReadFileLimited(path, kJsonMaxBytes, "a JSON file", &text, &why))
    throw UsageError("--headroom-from " + path + ": " + why);
  if (!BenchSolFromJson(text, &sol, &why)) throw UsageError("--headroom-from " + path + ": " + why);
  return sol;
}

// The batch's total time budget in seconds (0: none) from --time or --time-per-op.
double TotalTime(const BatchArgs& a) {
  double total = 0, per_op = 0;
  if (!ParseDuration(a.time, &total)) throw UsageError("--time must look like 90, 90s, 15m or 1h, not '" + a.time + "'");
  if (!ParseDuration(a.time_per_op, &per_op))
    throw UsageError("--time-per-op must look like 90, 90s, 15m or 1h, not '" + a.time_per_op + "'");
  if (total > 0 && per_op > 0) throw UsageError("give --time (the total) or --time-per-op, not both");
  return per_op > 0 ? per_op * static_cast<double>(a.ops.size()) : total;
}

// Splits `total` seconds by headroom (SplitBatchTime); fills a.shares and logs each with its reason.
void SplitTime(const Context& ctx, BatchArgs& a, double total, const std::map<std::string, double>& bench) {
  if (total <= 0) return;
  Store store;
  std::string err;
  if (!store.Open(StorePath(ctx), &err)) throw Failure("store: " + err);
  if (!SplitBatchTime(store, a.ops, ctx.arch, total, a.floor_s, bench, &a.shares, &err)) throw Failure("store: " + err);
  spdlog::info("batch: {:.0f} s split across {} operators by headroom (each at least {:.0f} s):", total, a.ops.size(),
               std::min(a.floor_s, total / static_cast<double>(a.ops.size())));
  for (const BudgetShare& share : a.shares) spdlog::info("  {:<28} {:7.0f} s  {}", share.op, share.seconds, share.why);
}

void WriteFileOrFail(const std::string& path, const std::string& text) {
  std::string err;
  if (!WriteFileAtomic(path, text, &err)) throw Failure(err);
}

// The scoreboards are written after every run and the logs from the first: a path that cannot be
// written is said now, before a GPU is looked for, not after hours of runs.
void CheckOutputs(const BatchArgs& a) {
  std::string why;
  auto check = [&why](OutputProblem p) {
    if (p == OutputProblem::usage) throw UsageError(why);
    if (p == OutputProblem::failure) throw Failure(why);
  };
  if (!a.scoreboard_md.empty()) check(CheckOutputFile("--scoreboard-md", a.scoreboard_md, &why));
  if (!a.scoreboard_json.empty()) check(CheckOutputFile("--scoreboard-json", a.scoreboard_json, &why));
  if (!a.log_dir.empty()) check(CheckOutputFolder("--log-dir", a.log_dir, &why));
}

void Batch(Context& ctx, BatchArgs& a) {
  if (a.all && !a.ops.empty()) throw UsageError("give operator names or --all, not both");
  if (a.all) {
    for (const std::string& dir : ListOperatorDirs(OperatorsDir(ctx)))
      a.ops.push_back(std::filesystem::path(dir).filename().string());
    if (a.ops.empty()) throw Failure("no operators in " + OperatorsDir(ctx));
  }
  if (a.ops.empty()) throw UsageError("name the operators to run, or --all");
  // Everything the command line says is checked before a GPU is looked for: an unknown operator,
  // a missing --headroom-from file or a bad duration is a usage error on any machine.
  for (const std::string& op : a.ops) CheckTorchGolden(LoadOperatorOption(ctx, "OPS", op));
  const double total_s = TotalTime(a);
  const std::map<std::string, double> bench = BenchSol(a.headroom_from);
  CheckOutputs(a);
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
  SplitTime(ctx, a, total_s, bench);
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
  if (!a.scoreboard_md.empty() || !a.scoreboard_json.empty()) {
    std::vector<ScoreboardRow> rows = BuildScoreboard(results);
    std::time_t t = std::time(nullptr);
    char day[32];
    std::strftime(day, sizeof day, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    std::string title = std::string("Suite scoreboard, ") + day + ", " + std::to_string(a.ops.size()) +
                        " operators on " + ctx.arch + (a.time_per_op.empty() ? "" : ", --time-per-op " + a.time_per_op) +
                        (a.time.empty() ? "" : ", --time " + a.time);
    if (!a.scoreboard_md.empty()) WriteFileOrFail(a.scoreboard_md, ScoreboardMarkdown(rows, title));
    if (!a.scoreboard_json.empty()) WriteFileOrFail(a.scoreboard_json, ScoreboardJson(rows, title));
    spdlog::info("scoreboard: {} rows{}{}", rows.size(), a.scoreboard_md.empty() ? "" : " in " + a.scoreboard_md,
                 a.scoreboard_json.empty() ? "" : " and " + a.scoreboard_json);
  }
  for (const BatchRunResult& r : results)
    if (!r.error.empty() || r.exit_code != 0) ctx.exit_code = kExitFailure;
}

}  // namespace

void set_batch_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "batch", "Run several operators at once, one run per free GPU, continuing after failures; ends with a table");
  cmd->add_option("OPS", a->ops, "Operator names or aliases");
  cmd->add_flag("--all", a->all, "Every operator of the suite");
  cmd->add_option("--gpus", a->gpus, "GPUs to use: all, a count (2) or indices (0,2 or 3,)")
      ->check(NonEmpty() & GpuListSyntax())
      ->capture_default_str();
  cmd->add_option("--log-dir", a->log_dir, "Folder for each run's log and JSON summary (default under the cache)");
  cmd->add_option("--agent", a->agent, "Agent of every run")->check(CLI::IsMember({"builtin"}))->capture_default_str();
  cmd->add_option("--iterations", a->iterations, "Candidates per run (with a time budget: no count unless given)")
      ->check(WholeNumber(0, kMaxIterations))
      ->capture_default_str();
  cmd->add_option("--time", a->time,
                  "Total wall-time budget of the batch, split across operators by headroom: 90, 90s, 15m, 1h")
      ->check(NonEmpty());
  cmd->add_option("--time-per-op", a->time_per_op,
                  "Budget per operator on average (the total, operators x this, is split by headroom)")
      ->check(NonEmpty());
  cmd->add_option("--headroom-from", a->headroom_from,
                  "JSON of `forgek --json ops bench`: SOL % for operators the store has not measured");
  cmd->add_option("--min-time", a->floor_s, "Seconds every run gets before the split by headroom")
      ->check(FiniteNonNegative())
      ->capture_default_str();
  cmd->add_option("--scoreboard-md", a->scoreboard_md, "Write the suite scoreboard (per config) as markdown here");
  cmd->add_option("--scoreboard-json", a->scoreboard_json, "Write the suite scoreboard as JSON here");
  cmd->add_option("--patience", a->patience, "Stop a run after this many candidates without a new best")
      ->check(WholeNumber(0, kMaxIterations));
  cmd->add_option("--batch", a->batch, "Proposals compiled in parallel per agent call")->check(CLI::Range(1, 64));
  cmd->add_option("--seed", a->seed, "Seed of the builtin agent's search");
  cmd->add_flag("--no-seal", a->no_seal, "Never seal");
  cmd->add_flag("--no-torch", a->no_torch, "Each run skips its PyTorch yardstick (run --no-torch)");
  cmd->callback([&ctx, a, cmd] {
    a->iterations_given = cmd->count("--iterations") > 0;
    Batch(ctx, *a);
  });
}

}  // namespace forgek::cli
