// `forgek run`: the main job. Evolves a faster kernel for one operator, learns, and seals the winner.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "load_operator.h"
#include "gpu_session.h"
#include "option_checks.h"
#include "forgek/run/agent_factory.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"

namespace forgek::cli {
namespace {

struct RunArgs {
  std::string op;
  std::string agent = "builtin";
  int iterations = 24;
  std::string time;  // "90", "90s", "15m", "1h"
  int patience = 0;
  int batch = 4;
  bool compile_only = false;
  bool no_seal = false;
  bool no_torch = false;
  int confirm = 3;
  uint64_t seed = 1;
  int seeds = 2;
  double deadline_s = 10;
  std::vector<std::string> configs;
  std::string resume;
  std::string from;  // replay source run
  std::string gpus;  // --gpus all|N|LIST ("" : the first GPU)
  // llm
  std::string provider = "openai";
  std::string model;
  std::string base_url;
  std::string api_key_env;
  double max_cost = 0;
  int64_t max_tokens = 0;
  LlmOptions http;  // the transport fields only: --http-*
  double tune_share = LlmOptions{}.tune_share;
};

// When the run's --time budget ends; empty until the run starts, or without a time budget.
using RunEnd = std::optional<std::chrono::steady_clock::time_point>;

// Ctrl-C or SIGTERM: the first asks the loop to stop after the current evaluation (the run ends
// `interrupted` with its summary); a second ends the process at once (every attempt so far is
// already committed to the store, and the run continues with --resume).
std::atomic<int> g_interrupts{0};

void OnInterrupt(int signo) {
  if (g_interrupts.fetch_add(1) >= 1) {
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  const char msg[] = "\nforgek: stopping after the current evaluation (Ctrl-C again to abandon it)\n";
  ssize_t unused = write(2, msg, sizeof msg - 1);
  (void)unused;
}

// The handlers of SIGINT and SIGTERM while a run is under way; the previous ones come back after.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    g_interrupts = 0;
    int_ = std::signal(SIGINT, OnInterrupt);
    term_ = std::signal(SIGTERM, OnInterrupt);
  }
  ~InterruptHandlers() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

void PrintSummary(const Context& ctx, const RunSummary& summary) {
  if (ctx.json)
    std::printf("%s\n", RunSummaryJson(summary).c_str());
  else
    std::printf("%s", RunSummaryText(summary, ctx.verbose > 0).c_str());
  std::fflush(stdout);
}

// The exit code of a run that ended: interrupted 130; recorded failed (an agent that gave up, a
// compile-only run where nothing compiled) 1; else 0, a spent --max-cost or --max-tokens included.
int ExitCodeOf(const RunSummary& summary) {
  if (summary.stop_reason == StopReason::interrupted) return kExitInterrupted;
  return forgek::RunExitCode(summary) != 0 ? kExitFailure : kExitOk;
}

// The agent the options name; usage errors (exit 2) for missing options, failures for the rest.
// `run_end`: when the run's --time budget ends, set once the run's loop starts.
std::unique_ptr<Agent> AgentFromArgs(const RunArgs& a, Store* store, ExchangeRecorder* recorder,
                                     std::shared_ptr<RunEnd> run_end) {
  AgentChoice choice;
  choice.kind = a.agent;
  choice.seed = a.seed;
  choice.replay_from = a.from;
  if (a.agent != "builtin") {
    LlmOptions& o = choice.llm;
    if (!ParseLlmProvider(a.provider, &o.provider))
      throw UsageError("--provider must be openai or anthropic, not '" + a.provider + "'");
    o.model = a.model;
    o.base_url = a.base_url;
    o.key_env = a.api_key_env;
    o.max_cost_usd = a.max_cost;
    o.max_tokens = a.max_tokens;
    o.connect_timeout_s = a.http.connect_timeout_s;
    o.request_timeout_s = a.http.request_timeout_s;
    o.low_speed_bytes_per_s = a.http.low_speed_bytes_per_s;
    o.low_speed_time_s = a.http.low_speed_time_s;
    o.deadline = [run_end] { return *run_end; };
    o.stop_requested = [] { return g_interrupts.load() > 0; };
    o.tune_share = a.tune_share;
    o.tune_seed = a.seed;
    if (a.agent == "llm" && a.model.empty()) throw UsageError("--agent llm needs --model");
    if (a.agent == "replay" && a.from.empty())
      throw UsageError("--agent replay needs --from RUN (a run whose LLM exchanges to replay)");
  }
  std::string err;
  std::unique_ptr<Agent> agent = MakeAgent(choice, store, recorder, &err);
  if (!agent) throw Failure(err);
  return agent;
}

// The LLM base URL (--base-url or the environment) before anything is created: a key in the URL
// would be printed and stored, so it is a usage mistake, quoted masked.
void CheckBaseUrlArg(const RunArgs& a) {
  LlmOptions o;
  if (a.agent != "llm" || !ParseLlmProvider(a.provider, &o.provider)) return;
  o.base_url = a.base_url;
  o.key_env = a.api_key_env;
  std::string why;
  if (!CheckLlmBaseUrl(ResolveLlmBaseUrl(o), ResolveLlmKeyEnv(o), &why)) throw UsageError("LLM " + why);
}

void Run(Context& ctx, const RunArgs& a) {
  if (a.op.empty() && a.resume.empty()) throw UsageError("run needs --op NAME (or --resume RUN)");
  CheckBaseUrlArg(a);
  if (!a.from.empty() && a.agent != "replay")
    throw UsageError("--from " + a.from + " needs --agent replay (it names the run whose LLM exchanges to replay)");
  double time_s = 0;
  if (!ParseDuration(a.time, &time_s)) throw UsageError("--time must look like 90, 90s, 15m or 1h, not '" + a.time + "'");

  // A usage mistake is found before the store is created or changed.
  OperatorSpec op;
  if (a.resume.empty()) {
    op = LoadOperatorOption(ctx, "--op", a.op);
    CheckConfigNames(op, a.configs);
    CheckTorchGolden(op);
  }

  Store store;
  std::string err;
  if (!store.Open(StorePath(ctx), &err, StoreMode::create)) throw Failure(err);

  if (!a.resume.empty()) {
    RunRecord prev;
    bool found = false;
    if (!store.GetRun(a.resume, &prev, &found, &err)) throw Failure(err);
    if (!found) throw Failure("no run " + a.resume + " in " + store.path());
    if (!a.op.empty() && a.op != prev.operator_name)
      throw UsageError("--resume " + a.resume + " is a run of " + prev.operator_name + ", not " + a.op);
    op = LoadOperatorOrFail(ctx, prev.operator_name);
    CheckConfigNames(op, a.configs);
    CheckTorchGolden(op);
  }

  RunOptions opts;
  opts.arch = ctx.arch;
  opts.iterations = a.iterations;
  opts.time_s = time_s;
  opts.patience = a.patience;
  opts.batch = a.batch;
  opts.compile_only = a.compile_only;
  opts.seeds = a.seeds;
  opts.deadline_s = a.deadline_s;
  opts.allow_seal = !a.no_seal;
  opts.torch_yardstick = !a.no_torch;
  opts.confirm = a.confirm;
  opts.configs = a.configs;
  opts.resume_run = a.resume;

  std::vector<GpuSession> gpus;
  if (!a.compile_only) {
    if (a.gpus.empty()) {
      gpus.emplace_back();
      if (!OpenGpuSession(ctx, &store, &gpus.front(), &err)) throw Failure(err);
    } else if (!OpenGpuSessions(ctx, &store, a.gpus, &gpus, &err)) {
      throw Failure(err);
    }
  }

  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  copts.pch_dir = CacheDir("pch");
  Compiler compiler(copts);

  StoreExchangeRecorder recorder(&store);
  auto run_end = std::make_shared<RunEnd>();
  std::unique_ptr<Agent> agent = AgentFromArgs(a, &store, &recorder, run_end);

  bool live = isatty(2) && !ctx.quiet && std::getenv("CI") == nullptr;
  RunServices services;
  services.agent = agent.get();
  services.compiler = &compiler;
  services.evaluator = gpus.empty() ? nullptr : gpus.front().evaluator.get();
  for (size_t i = 1; i < gpus.size(); ++i) services.more_evaluators.push_back(gpus[i].evaluator.get());
  services.store = &store;
  services.stop_requested = [] { return g_interrupts.load() > 0; };
  services.progress = [live](const std::string& line) {
    if (live) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
    } else {
      spdlog::info("{}", line);
    }
  };
  services.run_started = [&recorder](const std::string& id) { recorder.SetRun(id); };
  services.budget_ends = [run_end](RunEnd end) { *run_end = end; };

  RunSummary summary;
  bool ok = false;
  {
    InterruptHandlers handlers;
    spdlog::info("run: {} on {} with the {} agent", op.name, ctx.arch, agent->Name());
    ok = RunOptimisation(op, opts, services, &summary, &err);
  }
  if (live) std::fprintf(stderr, "\n");
  if (!ok) {
    // A run that had begun is recorded failed: its summary shows what it did before the error.
    if (!summary.run_id.empty()) PrintSummary(ctx, summary);
    throw Failure(err);
  }
  PrintSummary(ctx, summary);
  ctx.exit_code = ExitCodeOf(summary);
}

}  // namespace

void set_run_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Evolve a faster kernel for an operator: propose, compile, check, time, learn, seal the winner");
  cmd->add_option("--op", a->op, "Operator name or alias (see 'forgek ops list')");
  cmd->add_option("--agent", a->agent, "Who proposes kernels: builtin (offline evolutionary search), llm, replay")
      ->check(CLI::IsMember({"builtin", "llm", "replay"}))
      ->capture_default_str();
  cmd->add_option("--iterations", a->iterations, "Candidates to evaluate (0: until another budget ends)")
      ->check(WholeNumber(0, kMaxIterations))
      ->capture_default_str();
  cmd->add_option("--time", a->time,
                  "Wall-time budget: 90, 90s, 15m, 1h. The search stops early enough for the end of the run to fit "
                  "(the best's profile, one config at a time, and its ablations only while they fit; the "
                  "confirmation of the best always runs); the PyTorch yardstick is measured after it")->check(NonEmpty());
  cmd->add_option("--patience", a->patience, "Stop after this many candidates without a new best (0: never)")
      ->check(WholeNumber(0, kMaxIterations));
  cmd->add_option("--batch", a->batch, "Proposals compiled in parallel per agent call")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--compile-only", a->compile_only, "Run the agent and the compiler only (no GPU): checks an LLM setup");
  cmd->add_flag("--no-seal", a->no_seal, "Never seal, even when a candidate wins");
  cmd->add_flag("--no-torch", a->no_torch,
                "Skip the PyTorch yardstick at the end (torch eager and torch.compile timed beside the kernel "
                "serving each config; docs/importing.md)");
  cmd->add_option("--confirm", a->confirm,
                  "Candidates rated faster that are re-measured, best first, until one holds and is sealed")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the builtin agent's search")
      ->check(WholeNumber(0, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "Fresh input seeds for the correctness check (at least 2)")
      ->check(CLI::Range(2, 16))
      ->capture_default_str();
  cmd->add_option("--deadline", a->deadline_s, "Seconds a launch may take before it is a timeout")
      ->check(FinitePositive())
      ->capture_default_str();
  cmd->add_option("--gpus", a->gpus,
                  "GPUs to evaluate on, one worker each: all, a count (2) or indices (0,2 or 3,); default: the first")
      ->check(NonEmpty() & GpuListSyntax());
  cmd->add_option("--config", a->configs, "Evaluate only this config (repeatable; disables sealing)");
  cmd->add_option("--resume", a->resume, "Continue an earlier run (its id from the summary or the store)")
      ->check(NonEmpty());
  cmd->add_option("--from", a->from, "With --agent replay: the run whose LLM exchanges to replay")
      ->check(NonEmpty());
  cmd->add_option("--provider", a->provider, "LLM API: openai (Chat Completions) or anthropic (Messages)")
      ->capture_default_str();
  cmd->add_option("--model", a->model, "LLM model name");
  cmd->add_option("--base-url", a->base_url, "LLM API base URL")->envname("FORGEK_LLM_BASE_URL");
  cmd->add_option("--api-key-env", a->api_key_env,
                  "Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)")
      ->check(EnvVarName());
  cmd->add_option("--max-cost", a->max_cost, "Stop the LLM agent once this many US dollars are spent")
      ->check(FiniteNonNegative());
  cmd->add_option("--max-tokens", a->max_tokens, "Stop the LLM agent once this many tokens are used")
      ->check(WholeNumber(0, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--http-connect-timeout", a->http.connect_timeout_s, "Seconds to connect to the LLM API")
      ->check(FinitePositive())
      ->capture_default_str();
  cmd->add_option("--http-timeout", a->http.request_timeout_s,
                  "Seconds one LLM request may take, the model's thinking included (never past --time)")
      ->check(FinitePositive())
      ->capture_default_str();
  cmd->add_option("--http-low-speed", a->http.low_speed_bytes_per_s,
                  "Bytes/s below which a started LLM response is cut as stalled (see --http-low-speed-time)")
      ->check(FiniteNonNegative())
      ->capture_default_str();
  cmd->add_option("--http-low-speed-time", a->http.low_speed_time_s,
                  "Seconds over which --http-low-speed is averaged")
      ->check(FinitePositive())
      ->capture_default_str();
  cmd->add_option("--tune-share", a->tune_share,
                  "Share of the attempts spent searching the families the LLM writes before it is asked again "
                  "(0: none; below 1)")
      ->check(NumberInRange(0.0, 0.99))
      ->capture_default_str();
  cmd->callback([&ctx, a] { Run(ctx, *a); });
}

}  // namespace forgek::cli
