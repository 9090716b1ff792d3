// `forgek regress`: the nightly regression job. Every operator's newest seal of this GPU model is
// re-checked against the expert reference in one worker, each config classified; JUnit and JSON
// for CI systems, every result kept in the store as the nightly history; exit 3 on a regression.
#include <cstdio>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "gpu_session.h"
#include "load_operator.h"
#include "output_path.h"
#include "printable.h"
#include "forgek/core/atomic_file.h"
#include "forgek/core/hash.h"
#include "forgek/seal/regress.h"
#include "forgek/knowledge/store.h"

namespace forgek::cli {
namespace {

struct RegressArgs {
  std::vector<std::string> ops;
  double threshold = 0;
  std::string junit, json_file;
  bool across_versions = false;
};

void CheckOutputs(const RegressArgs& a) {
  std::string why;
  for (const auto& [option, path] : {std::pair<std::string, std::string>{"--junit", a.junit}, {"--json-file", a.json_file}}) {
    if (path.empty()) continue;
    OutputProblem p = CheckOutputFile(option, path, &why);
    if (p == OutputProblem::usage) throw UsageError(why);
    if (p == OutputProblem::failure) throw Failure(why);
  }
}

void WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  std::string err;
  if (!WriteFileAtomic(path, text, &err)) throw Failure(err);
}

void Regress(Context& ctx, const RegressArgs& a) {
  if (!(a.threshold >= 0 && a.threshold < 1))
    throw UsageError(fmt::format("--threshold {} is not a fraction in [0, 1): 0.02 ignores changes under 2%", a.threshold));
  CheckOutputs(a);
  // Operator names are checked (and aliases resolved) before any GPU time is spent.
  std::vector<std::string> ops;
  for (const std::string& name : a.ops) ops.push_back(LoadOperatorOption(ctx, "--ops", name).name);

  // An existing store only: a mistyped --store must not pass the night on an empty one.
  Store store;
  std::string err;
  if (!store.Open(StorePath(ctx), &err, StoreMode::existing)) throw Failure(err);
  GpuSession gpu;
  if (!OpenGpuSession(ctx, &store, &gpu, &err)) throw Failure(err);

  RegressReport report;
  report.started_at = NowIso8601();
  report.device = gpu.evaluator->DeviceName();
  report.driver = gpu.evaluator->DriverVersion();
  report.toolchain = "nvrtc " + Compiler::NvrtcVersion();
  report.arch = ctx.arch;
  report.threshold = a.threshold;
  std::random_device entropy;
  report.check_id = Sha256Hex(report.started_at + "\n" + report.device + "\n" + std::to_string(entropy())).substr(0, 16);

  RegressScope scope;
  scope.arch = ctx.arch;
  scope.device = report.device;
  scope.driver = report.driver;
  scope.toolchain = report.toolchain;
  scope.operators = ops;
  scope.across_versions = a.across_versions;
  std::vector<RegressTarget> targets;
  if (!SelectRegressTargets(store, scope, &targets, &err)) throw Failure("store: " + err);
  if (targets.empty()) spdlog::warn("regress: no seals of {} in {}", ctx.arch, store.path());

  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  Compiler compiler(copts);
  size_t index = 0;
  for (const RegressTarget& t : targets) {
    ++index;
    RegressSealResult r;
    r.operator_name = t.operator_name;
    r.seal_id = t.seal.id;
    if (!t.skip_reason.empty()) {
      r.status = RegressSealResult::Status::skipped;
      r.reason = t.skip_reason;
    } else {
      std::fprintf(stderr, "regress: [%zu/%zu] %s seal %s\n", index, targets.size(), Printable(t.operator_name).c_str(),
                   t.seal.id.substr(0, 12).c_str());
      try {
        OperatorSpec op = LoadOperatorOrFail(ctx, t.operator_name);
        r = RegressSeal(*gpu.evaluator, store, compiler, op, t.seal, a.threshold);
      } catch (const Failure& f) {  // the operator's folder is gone or broken: this seal only
        r.status = RegressSealResult::Status::error;
        r.reason = f.what();
      }
    }
    std::fprintf(stderr, "regress: [%zu/%zu] %s: %s%s\n", index, targets.size(), Printable(t.operator_name).c_str(),
                 r.status == RegressSealResult::Status::skipped ? "skipped"
                 : r.status == RegressSealResult::Status::error ? "ERROR"
                 : r.Regressed()                                ? "REGRESSION"
                                                                : "holds",
                 r.reason.empty() ? "" : (": " + Printable(r.reason)).c_str());
    report.seals.push_back(std::move(r));
  }

  // The reports first, then the history: a store that cannot take the rows loses no report.
  WriteOutput(a.junit, RegressJunit(report));
  WriteOutput(a.json_file, RegressJson(report));
  if (ctx.json)
    std::printf("%s\n", RegressJson(report).c_str());
  else
    std::printf("%s", Printable(RegressText(report)).c_str());
  if (!store.AddSealChecks(RegressHistoryRows(report), &err)) throw Failure("store: the nightly history: " + err);
  ctx.exit_code = report.Regressions() > 0 ? kExitRegression : kExitOk;
}

}  // namespace

void set_regress_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<RegressArgs>();
  CLI::App* cmd = app.add_subcommand(
      "regress",
      "Nightly regression check: every operator's newest seal of this GPU re-checked against the expert "
      "reference (exit 3 on a regression), with JUnit and JSON reports and the history kept in the store");
  cmd->add_option("--ops", a->ops, "Only these operators (names or aliases; comma-separated or repeated)")
      ->delimiter(',');
  cmd->add_option("--threshold", a->threshold,
                  "Ignore differences from the expert smaller than this fraction (0.02: 2%), on top of the noise")
      ->capture_default_str();
  cmd->add_option("--junit", a->junit, "Write a JUnit XML report here (a testsuite per operator, a testcase per config)");
  cmd->add_option("--json-file", a->json_file, "Write the JSON report here (--json prints it on stdout)");
  cmd->add_flag("--across-versions", a->across_versions,
                "Also check seals built with another driver or toolkit (skipped by default)");
  cmd->footer(
      "\nEach config is classified against the expert reference measured now, interleaved in one worker:\n"
      "faster, same or slower (beyond the noise, and --threshold), wrong (incorrect on fresh seeds), or\n"
      "unmeasured. A seal regresses when a config is slower, wrong or unmeasured, when a check beyond the\n"
      "suite fails (a dispatch's fallback, shapes drawn within the operator's ranges), or when it cannot be\n"
      "measured at all. Seals of another GPU model, driver or toolkit are reported skipped. Every result is\n"
      "stored (the nightly history). Exit codes: 0 nothing regressed, 3 a regression, 1 no GPU or store.\n");
  cmd->callback([&ctx, a] { Regress(ctx, *a); });
}

}  // namespace forgek::cli
