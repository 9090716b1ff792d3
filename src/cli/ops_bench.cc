// `forgek ops bench [OPS...]`: the expert reference of each config, timed against its roofline.
#include "ops_bench.h"
#include "load_operator.h"

#include <cstdio>
#include <future>
#include <memory>

#include <spdlog/spdlog.h>

#include "bench_rows.h"
#include "gpu_session.h"
#include "option_checks.h"
#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/knowledge/store.h"
#include "forgek/seal/incumbent.h"

namespace forgek::cli {
namespace {

struct BenchArgs {
  std::vector<std::string> ops;  // empty: every operator
  bool markdown = false;
  int seeds = 1;
  double deadline_s = 30;
};

// Every named operator loaded (all of them when none is named), before the GPU is touched.
std::vector<OperatorSpec> LoadOperators(const Context& ctx, const std::vector<std::string>& names) {
  std::vector<OperatorSpec> ops;
  for (const std::string& name : names) ops.push_back(LoadOperatorOption(ctx, "OPS", name));
  if (!names.empty()) return ops;
  const std::string root = OperatorsDir(ctx);
  for (const std::string& dir : ListOperatorDirs(root)) {
    OperatorSpec op;
    Diagnostics diags;
    if (!LoadOperator(dir, &op, &diags)) throw Failure(FormatDiagnostics(diags));
    ops.push_back(std::move(op));
  }
  if (ops.empty()) throw Failure("no operators in " + root);
  return ops;
}

double Formula(const std::string& text, const ConfigSpec& config) {
  int64_t v = 0;
  Diagnostic d;
  return EvalExpression(text, config.values, &v, &d) ? static_cast<double>(v) : 0;
}

// An operator's golden and expert reference, ready to run (or why not).
struct Prepared {
  Incumbent reference;
  KernelUnderTest golden;
  std::string err;
  bool ok = false;
};

// Compiles every operator's golden and reference at once: the NVRTC pool works in parallel.
std::vector<Prepared> PrepareAll(const Context& ctx, const std::vector<OperatorSpec>& ops, Compiler& compiler) {
  std::vector<std::future<Prepared>> futures;
  for (const OperatorSpec& op : ops)
    futures.push_back(std::async(std::launch::async, [&ctx, &op, &compiler] {
      Prepared p;
      p.ok = PrepareExpertReference(op, ctx.arch, compiler, &p.reference, &p.err) &&
             PrepareGolden(op, ctx.arch, compiler, &p.golden, &p.err);
      return p;
    }));
  std::vector<Prepared> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

// One row per config: each config is evaluated alone, so one failure leaves the others measured.
void BenchOperator(const OperatorSpec& op, const Prepared& kernels, const BenchArgs& a, Evaluator& evaluator,
                   std::vector<BenchRow>* rows) {
  for (const ConfigSpec& config : op.configs) {
    BenchRow row;
    row.op = op.name;
    row.config = config.name;
    row.reference = op.reference.library.empty() ? InstanceText(op.reference.kernel, op.reference.params) : op.reference.library;
    row.flops = Formula(op.flops, config);
    row.bytes = Formula(op.bytes, config);
    if (!kernels.ok) {
      row.status = "compile_error";
      row.detail = kernels.err;
      rows->push_back(row);
      continue;
    }
    spdlog::info("{} {}: timing {}", op.name, config.name, row.reference);
    EvalRequest req;
    req.op = &op;
    req.candidate = kernels.reference.kernel;
    req.golden = kernels.golden;
    req.configs = {config.name};
    req.seeds = a.seeds;
    req.deadline_s = a.deadline_s;
    EvalResult r = evaluator.Evaluate(req);
    // Without an incumbent a correct, timed reference comes back as `correct`.
    const bool ok = r.outcome == Outcome::correct && !r.configs.empty() && r.configs[0].candidate.samples > 0;
    if (!r.configs.empty()) {
      row.time = r.configs[0].candidate;
      row.sol_us = r.configs[0].sol_us;
      row.datasheet_sol_us = r.configs[0].datasheet_sol_us;
      row.floor_us = r.configs[0].floor_us;
    }
    if (!ok) {
      row.status = OutcomeName(r.outcome);
      row.detail = r.detail;
      row.time = {};
    }
    rows->push_back(row);
  }
}

void RunBench(Context& ctx, const BenchArgs& a) {
  if (a.markdown && ctx.json) throw UsageError("give at most one of --markdown and --json");
  std::vector<OperatorSpec> ops = LoadOperators(ctx, a.ops);
  std::string err;
  Store store;
  if (!store.Open(StorePath(ctx), &err, StoreMode::create)) throw Failure(err);
  GpuSession session;
  if (!OpenGpuSession(ctx, &store, &session, &err)) throw Failure(err);

  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  copts.pch_dir = CacheDir("pch");
  Compiler compiler(copts);
  std::vector<Prepared> kernels = PrepareAll(ctx, ops, compiler);
  std::vector<BenchRow> rows;
  for (size_t i = 0; i < ops.size(); ++i) BenchOperator(ops[i], kernels[i], a, *session.evaluator, &rows);

  const std::string device = session.evaluator->DeviceName();
  if (ctx.json) std::printf("%s\n", BenchJson(rows, device).dump(2).c_str());
  else if (a.markdown) std::printf("%s", BenchMarkdown(rows, device).c_str());
  else std::printf("%s", BenchText(rows, device).c_str());
  std::fflush(stdout);
  for (const BenchRow& r : rows)
    if (r.status != "ok") ctx.exit_code = kExitFailure;
}

}  // namespace

void AddOpsBenchCommand(CLI::App* ops, Context& ctx) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* bench = ops->add_subcommand(
      "bench", "Time the expert reference of every config (all operators when none named): time, TFLOP/s, GB/s, SOL %");
  bench->add_option("ops", a->ops, "Operator names or aliases");
  bench->add_flag("--markdown", a->markdown, "Print a markdown table (the global --json prints JSON)");
  bench->add_option("--seeds", a->seeds, "Fresh input seeds for the reference's correctness check")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  bench->add_option("--deadline", a->deadline_s, "Seconds a launch may run before the worker is killed")
      ->check(FinitePositive())
      ->capture_default_str();
  bench->callback([&ctx, a] { RunBench(ctx, *a); });
}

}  // namespace forgek::cli
