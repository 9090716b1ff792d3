// `forgek eval`: compile a kernel, check it against the golden and time it against the incumbent.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "option_checks.h"
#include "load_operator.h"
#include "params_option.h"
#include "forgek/seal/incumbent.h"
#include "forgek/knowledge/store.h"
#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/core/torch_helper.h"
#include "forgek/eval/worker_client.h"
#include "forgek/protocol/worker_protocol.h"
#include "forgek/report/torch_yardstick.h"

namespace forgek::cli {
namespace {

struct EvalArgs {
  std::string op;
  std::string kernel;
  std::vector<std::string> configs;
  std::string params;  // "BM=128,BN=64"
  std::string against = "reference";
  int seeds = 2;
  double deadline_s = 10;
  bool no_time = false;
  bool torch = false;  // PyTorch eager and torch.compile beside the kernel
};

Candidate LoadKernelFile(const std::string& path) {
  Candidate c;
  Diagnostics diags;
  if (!LoadCandidateFile(path, &c, &diags)) throw Failure(FormatDiagnostics(diags));
  return c;
}

// Compiles every kernel in parallel on the NVRTC pool; throws on the golden's or reference's
// failure (the operator is broken), returns the candidate's result for the caller to report.
struct Compiled {
  KernelUnderTest golden, candidate, incumbent;
  CompileResult candidate_result;
  double seconds = 0;
};

Compiled CompileAll(const Context& ctx, const OperatorSpec& op, const Candidate& cand, const ParamAssignment& params) {
  auto start = std::chrono::steady_clock::now();
  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  copts.pch_dir = CacheDir("pch");
  Compiler compiler(copts);
  auto submit = [&](const Candidate& c, const ParamAssignment& p) {
    CompileRequest req;
    req.name = c.path.empty() ? "kernel.cu" : c.path;
    req.source = c.source;
    req.arch = ctx.arch;
    req.options = ParamDefines(p);
    return compiler.Submit(req);
  };
  auto fixed = [](const CandidateManifest& m) {
    ParamAssignment p;
    for (const ParamSpec& s : m.params) p[s.name] = s.values.empty() ? 0 : s.values[0];
    return p;
  };
  Compiled out;
  // A PyTorch golden is computed by the worker's helper: nothing to compile.
  const bool torch_golden = IsTorchGolden(op.golden);
  Candidate golden;
  std::future<CompileResult> golden_future;
  if (!torch_golden) {
    golden = LoadKernelFile(op.dir + "/" + op.golden);
    golden_future = submit(golden, fixed(golden.manifest));
  }
  auto cand_future = submit(cand, params);
  std::future<CompileResult> ref_future;
  Candidate ref;
  if (op.reference.library.empty()) {
    Diagnostics diags;
    if (!LoadReferenceKernel(op, &ref, &diags)) throw Failure(FormatDiagnostics(diags));
    ref_future = submit(ref, fixed(ref.manifest));
  }
  if (torch_golden) {
    out.golden.label = "golden";
    const std::filesystem::path file = std::filesystem::path(op.dir) / op.golden;
    out.golden.torch_file = std::filesystem::absolute(file).string();
  } else {
    CompileResult g = golden_future.get();
    if (!g.ok) throw Failure(op.golden + " (golden) does not compile:\n" + g.Summary());
    out.golden = {"golden", "", g.cubin, golden.manifest, fixed(golden.manifest)};
  }
  out.candidate_result = cand_future.get();
  out.candidate = {"candidate", "", out.candidate_result.cubin, cand.manifest, params};
  if (op.reference.library.empty()) {
    CompileResult r = ref_future.get();
    if (!r.ok) throw Failure(op.reference.kernel + " (reference) does not compile:\n" + r.Summary());
    out.incumbent = {"reference", "", r.cubin, ref.manifest, fixed(ref.manifest)};
  } else {
    out.incumbent = {"reference", op.reference.library, "", {}, {}};
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

nlohmann::json ResultJson(const EvalResult& r, double compile_s) {
  nlohmann::json configs = nlohmann::json::array();
  for (const ConfigResult& c : r.configs) {
    nlohmann::json row = {{"config", c.config}, {"correctness", ToJson(c.correctness)},
                          {"candidate", ToJson(c.candidate)}, {"incumbent", ToJson(c.incumbent)},
                          {"speedup", c.speedup}, {"roofline_us", c.roofline_us}, {"floor_us", c.floor_us},
                          {"sol_us", c.sol_us}, {"sol_pct", c.sol_pct}, {"datasheet_sol_us", c.datasheet_sol_us},
                          {"datasheet_sol_pct", c.datasheet_sol_pct}};
    if (c.paired.pairs > 0)  // each round's incumbent time over the candidate's: the speedup's noise
      row["paired"] = {{"median", c.paired.median}, {"rel_noise", c.paired.rel_noise}, {"pairs", c.paired.pairs}};
    if (c.golden.seeds > 0) row["golden_timing"] = ToJson(c.golden);  // a PyTorch golden's cost
    if (c.torch.asked()) row["torch"] = TorchYardstickJson(c.torch, c.candidate.median_us);
    configs.push_back(std::move(row));
  }
  return {{"outcome", OutcomeName(r.outcome)}, {"detail", r.detail}, {"configs", configs},
          {"geomean_speedup", r.geomean_speedup}, {"eval_s", r.wall_s}, {"compile_s", compile_s}};
}

std::string ResultText(const EvalResult& r, const std::string& title) {
  std::string out = title + "\n";
  // SOL%: of the config's bound, max(roofline, launch floor), at the calibrated peaks; sheet%: at
  // the datasheet's.
  out += fmt::format("{:<22} {:<8} {:>10} {:>10} {:>22} {:>22} {:>8} {:>6} {:>6}\n", "config", "correct", "rel_l2",
                     "max_abs", "time us (noise)", "incumbent us", "speedup", "SOL%", "sheet%");
  for (const ConfigResult& c : r.configs) {
    auto time = [](const TimingStats& t) {
      return t.samples ? fmt::format("{:.2f} ±{:.1f}% n={}", t.median_us, t.rel_noise * 100, t.samples) : "-";
    };
    out += fmt::format("{:<22} {:<8} {:>10.3g} {:>10.3g} {:>22} {:>22} {:>8} {:>6} {:>6}\n", c.config,
                       c.correctness.ok ? "yes" : "NO", c.correctness.rel_l2, c.correctness.max_abs,
                       time(c.candidate), time(c.incumbent),
                       c.speedup > 0 ? fmt::format("{:.3f}x", c.speedup) : "-",
                       c.sol_pct > 0 ? fmt::format("{:.1f}", c.sol_pct) : "-",
                       c.datasheet_sol_pct > 0 ? fmt::format("{:.1f}", c.datasheet_sol_pct) : "-");
  }
  // A PyTorch golden's cost, per config: what checking against it adds to each evaluation.
  for (const ConfigResult& c : r.configs) {
    if (c.golden.seeds <= 0) continue;
    const double n = c.golden.seeds;
    const bool mapped = c.golden.transport == "cuda_ipc";
    out += fmt::format("golden {}: PyTorch on {} through {}, {:.1f} ms per seed ({:.1f} ms {}, {:.1f} ms torch), "
                       "{} seeds\n",
                       c.config, c.golden.device, mapped ? "CUDA IPC" : "the pipes", c.golden.total_ms / n,
                       c.golden.copy_ms / n, mapped ? "mapping" : "device copies", c.golden.compute_ms / n,
                       c.golden.seeds);
  }
  for (const ConfigResult& c : r.configs)
    if (c.torch.asked()) out += fmt::format("torch {}: {}\n", c.config, TorchYardstickText(c.torch, c.candidate.median_us));
  out += fmt::format("outcome: {}: {}\n", OutcomeName(r.outcome), r.detail);
  return out;
}

void RunEval(Context& ctx, const EvalArgs& a) {
  std::string err;
  OperatorSpec op = LoadOperatorOption(ctx, "--op", a.op);
  CheckConfigNames(op, a.configs);
  CheckTorchGolden(op);
  if (a.torch && YardstickOf(op).empty())
    throw UsageError("--torch: " + op.name + " names no PyTorch form: its golden is a CUDA kernel (" + op.golden +
                     ") and operator.json has no \"yardstick\" (docs/importing.md)");
  if (a.torch && a.no_time) throw UsageError("--torch times PyTorch beside the kernel: drop --no-time");
  Candidate cand = LoadKernelFile(a.kernel);
  Diagnostics diags;
  if (!ValidateCandidate(cand, op, &diags)) throw Failure(FormatDiagnostics(diags));
  ParamAssignment params = ChooseParams(a.params, cand.manifest, a.kernel);
  // --against seal: the newest seal of (operator, arch) is the incumbent; checked before the GPU.
  Store store;
  if (a.against == "seal") {
    if (!store.Open(StorePath(ctx), &err, StoreMode::read_only)) throw Failure(err);
    SealRecord seal;
    bool found = false;
    if (!store.LatestSeal(op.name, ctx.arch, &seal, &found, &err)) throw Failure(err);
    if (!found)
      throw Failure("--against seal: the store " + store.path() + " holds no seal of " + op.name + " on " + ctx.arch +
                    "; use --against reference");
  }

  WorkerEvaluator evaluator;
  ProbeResult probe;
  if (!evaluator.Probe(&probe, &err)) throw Failure("no GPU to evaluate on: " + err);

  // The worker opens its context and measures the peaks while NVRTC compiles.
  auto warm_up = std::async(std::launch::async, [&evaluator] {
    DevicePeaks peaks;
    std::string why;
    evaluator.client().Call("prepare", {}, 60);
    if (!evaluator.Peaks(&peaks, &why)) spdlog::warn("{}", why);
  });
  Compiled k;
  try {
    k = CompileAll(ctx, op, cand, params);
  } catch (...) {
    warm_up.wait();
    throw;
  }
  warm_up.wait();
  if (a.against == "seal") {
    CompilerOptions copts;
    copts.cache_dir = CacheDir("nvrtc");
    Compiler compiler(copts);
    Incumbent seal;
    if (!PickIncumbent(op, ctx.arch, &store, compiler, &seal, &err)) throw Failure(err);
    for (const std::string& note : seal.skipped_seals) spdlog::warn("{}", note);
    k.incumbent = seal.kernel;
  }
  EvalResult result;
  if (!k.candidate_result.ok) {
    result.outcome = Outcome::compile_error;
    result.detail = k.candidate_result.Summary();
  } else {
    EvalRequest req;
    req.op = &op;
    req.golden = k.golden;
    req.candidate = k.candidate;
    req.incumbent = k.incumbent;
    req.configs = a.configs;
    req.seeds = a.seeds;
    req.time = !a.no_time;
    req.deadline_s = a.deadline_s;
    if (a.torch) req.torch_yardstick = YardstickOf(op);
    result = evaluator.Evaluate(req);
  }
  if (ctx.json) {
    nlohmann::json j = ResultJson(result, k.seconds);
    j["device"] = probe.devices.empty() ? "" : probe.devices[0].name;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::string title = fmt::format("{} / {} vs {} on {} (compile {:.2f} s, evaluate {:.2f} s)", op.name, a.kernel,
                                    a.against == "seal" ? k.incumbent.label : k.incumbent.library.empty() ? op.reference.kernel : k.incumbent.library,
                                    probe.devices.empty() ? "?" : probe.devices[0].name, k.seconds, result.wall_s);
    std::printf("%s", ResultText(result, title).c_str());
  }
  bool correct = OutcomeTimed(result.outcome) || result.outcome == Outcome::correct;
  ctx.exit_code = correct ? kExitOk : kExitFailure;
}

}  // namespace

void set_eval_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Check a kernel against the golden on every config and time it against the reference");
  cmd->add_option("--op", a->op, "Operator name or alias")->required();
  cmd->add_option("--kernel", a->kernel, "Candidate .cu file (manifest + device code)")->required()->check(ReadableFile());
  cmd->add_option("--config", a->configs, "Only these configs (repeatable; default: every config)");
  cmd->add_option("--params", a->params, "Values for a family's params: BM=128,BN=64");
  cmd->add_option("--against", a->against, "Incumbent to time against: reference or seal")
      ->check(CLI::IsMember({"reference", "seal"}))
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "Fresh input seeds for the correctness check")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--deadline", a->deadline_s, "Seconds a kernel may run before the worker is killed")
      ->check(FinitePositive())
      ->capture_default_str();
  cmd->add_flag("--no-time", a->no_time, "Check correctness only");
  cmd->add_flag("--torch", a->torch,
                "Time PyTorch beside the kernel on each config, eagerly and under torch.compile, cold L2, median "
                "(an operator whose golden is a PyTorch problem, or whose operator.json names a \"yardstick\"; "
                "docs/importing.md)");
  cmd->callback([&ctx, a] { RunEval(ctx, *a); });
}

}  // namespace forgek::cli
