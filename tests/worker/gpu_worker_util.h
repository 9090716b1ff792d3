// Shared by the worker's GPU tests: GPU detection through the worker, the forgek binary beside the
// tests, operators, and compiling kernels for an evaluation.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/params.h"
#include "forgek/core/paths.h"
#include "forgek/eval/worker_client.h"
#include "test_util.h"

namespace forgek::testing {

inline std::vector<std::string> WorkerCommand() { return {ForgekBinary(), "worker"}; }

// Empty when the worker can open a GPU; else the worker's reason.
inline std::string WorkerGpuMissing() {
  WorkerEvaluatorOptions opts;
  opts.command = WorkerCommand();
  WorkerEvaluator evaluator(opts);
  ProbeResult probe;
  std::string err;
  if (!evaluator.Probe(&probe, &err)) return err;
  return "";
}

#define FORGEK_SKIP_WITHOUT_WORKER_GPU()                              \
  do {                                                                \
    const std::string why = ::forgek::testing::WorkerGpuMissing();    \
    if (!why.empty()) GTEST_SKIP() << why;                            \
  } while (0)

inline std::string OperatorsRoot() { return FindDataDir("operators", "FORGEK_OPERATORS"); }

inline OperatorSpec LoadOp(const std::string& dir) {
  OperatorSpec op;
  Diagnostics diags;
  EXPECT_TRUE(LoadOperator(dir, &op, &diags)) << FormatDiagnostics(diags);
  return op;
}

// A compiler without caches: the GPU tests prove today's sources.
inline CompilerOptions NoCache() {
  CompilerOptions o;
  o.cache_dir = "";
  o.pch_dir = "";
  return o;
}

// `c` (loaded from `path`) at `params`, compiled for sm90, as a KernelUnderTest.
inline KernelUnderTest CompileLoaded(Compiler& compiler, const Candidate& c, const std::string& path,
                                     const std::string& label, const ParamAssignment& params) {
  CompileRequest req;
  req.name = path;
  req.source = c.source;
  req.arch = "sm90";
  req.options = ParamDefines(params);
  CompileResult r = compiler.CompileNow(req);
  EXPECT_TRUE(r.ok) << path << ":\n" << r.Summary();
  return {label, "", r.cubin, c.manifest, params};
}

// Every param of `c` at its first value (its fixed params, for a kernel that is not a family).
inline ParamAssignment FirstValues(const Candidate& c) {
  ParamAssignment params;
  for (const ParamSpec& p : c.manifest.params) params[p.name] = p.values.at(0);
  return params;
}

// `c` at the first value of every param.
inline KernelUnderTest CompileLoaded(Compiler& compiler, const Candidate& c, const std::string& path,
                                     const std::string& label) {
  return CompileLoaded(compiler, c, path, label, FirstValues(c));
}

// `c` at the params of a JSON object ({"BM":128,...}), each param it leaves out at its first value, so that a
// param added to a family later keeps a test's instance whole (`forgek eval --params`, for a user, fills only
// the fixed ones); empty (and a test failure) when it does not parse or names a param the family does not declare.
inline KernelUnderTest CompileLoaded(Compiler& compiler, const Candidate& c, const std::string& path,
                                     const std::string& label, const char* params_json) {
  ParamAssignment given;
  std::string err;
  if (!ParseParamsJson(params_json, &given, &err)) {
    ADD_FAILURE() << params_json << ": " << err;
    return {};
  }
  ParamAssignment params = FirstValues(c);
  for (const auto& [name, value] : given) {
    if (!params.count(name)) {
      ADD_FAILURE() << params_json << ": '" << name << "' is not a param of " << path;
      return {};
    }
    params[name] = value;
  }
  return CompileLoaded(compiler, c, path, label, params);
}

inline KernelUnderTest CompileKernel(Compiler& compiler, const std::string& path, const std::string& label) {
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(LoadCandidateFile(path, &c, &diags)) << FormatDiagnostics(diags);
  return CompileLoaded(compiler, c, path, label);
}

// The operator's seed as a run starts from it (LoadSeed: a file, or one instance of a file).
inline KernelUnderTest CompileSeed(Compiler& compiler, const OperatorSpec& op, const std::string& label) {
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(LoadSeed(op, &c, &diags)) << FormatDiagnostics(diags);
  return CompileLoaded(compiler, c, op.dir + "/" + op.seed, label);
}

inline KernelUnderTest Reference(Compiler& compiler, const OperatorSpec& op) {
  if (!op.reference.library.empty()) return {"reference", op.reference.library, "", {}, {}};
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(LoadReferenceKernel(op, &c, &diags)) << FormatDiagnostics(diags);
  return CompileLoaded(compiler, c, op.dir + "/" + op.reference.kernel, "reference");
}

// One instance of a family file: `params_json` compiled, then evaluated untimed against `golden` on
// every config of `op` over `seeds` seeds (each a fresh draw of the inputs); expects it correct on
// every config and prints each config's errors, each line tagged `tag`.
inline void ExpectInstanceCorrect(Compiler& compiler, WorkerEvaluator& ev, const OperatorSpec& op,
                                  const KernelUnderTest& golden, const std::string& path, const char* params_json,
                                  int seeds, const char* tag) {
  Candidate family;
  Diagnostics diags;
  ASSERT_TRUE(LoadCandidateFile(path, &family, &diags)) << FormatDiagnostics(diags);
  EvalRequest req;
  req.op = &op;
  req.golden = golden;
  req.candidate = CompileLoaded(compiler, family, path, tag, params_json);
  ASSERT_FALSE(req.candidate.cubin.empty()) << params_json;
  req.seeds = seeds;
  req.time = false;
  const EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << params_json << ": " << OutcomeName(r.outcome) << ": " << r.detail;
  EXPECT_EQ(r.configs.size(), op.configs.size()) << params_json;
  for (const ConfigResult& c : r.configs)
    std::printf("[ %-8s ] %s %s: %d seeds, rel_l2 %.3g max_abs %.3g\n", tag, params_json, c.config.c_str(), seeds,
                c.correctness.rel_l2, c.correctness.max_abs);
}

}  // namespace forgek::testing
