// Seal verification: the sealed kernel rebuilt and re-measured against the expert reference now,
// under the one rule (forgek/verdict.h). The caller brings the evaluator (a GPU session or a test's).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/seal/dispatch.h"
#include "forgek/seal/outside_shapes.h"
#include "forgek/core/params.h"
#include "forgek/seal/seal.h"
#include "forgek/seal/incumbent.h"

namespace forgek {

SealMeasurement MeasureSeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                            const SealRecord& seal) {
  SealMeasurement m;
  std::string err;
  if (!seal.device.empty() && evaluator.DeviceName() != seal.device)
    spdlog::warn("seal {} was timed on {}, this is {}: times are compared anyway", seal.id.substr(0, 12), seal.device,
                 evaluator.DeviceName());
  CandidateRecord cand;
  bool found = false;
  if (!store.GetCandidate(seal.candidate_hash, &cand, &found, &err)) return m.error = err, m;
  if (!found) return m.error = "the store does not hold its candidate " + seal.candidate_hash, m;
  Candidate source;
  Diagnostics diags;
  if (!ParseCandidate("seal.cu", cand.source, &source, &diags)) return m.error = FormatDiagnostics(diags), m;
  ParamAssignment params;
  if (!ParseParamsJson(seal.params_json, &params, &err)) return m.error = err, m;
  EvalRequest req;
  req.op = &op;
  std::string feedback;
  if (!LoadSealedKernel(store, compiler, seal.arch, source, params, seal.cubin_sha256, seal.toolchain,
                        "seal " + seal.id.substr(0, 12), &req.candidate, &feedback))
    return m.error = "no longer compiles: " + feedback, m;
  Incumbent expert;
  if (!PrepareExpertReference(op, seal.arch, compiler, &expert, &err)) return m.error = err, m;
  if (!PrepareGolden(op, seal.arch, compiler, &req.golden, &err)) return m.error = err, m;
  req.incumbent = expert.kernel;
  req.seeds = 3;
  // A dispatch seal is verified config by config, each with the kernel the one rule serves it with
  // (its table's row, else its fallback where that accepts the shape, else the expert reference).
  Incumbent served;
  served.kernel = req.candidate;
  if (!LoadDispatchKernels(seal, seal.arch, store, compiler, &served, &err)) return m.error = err, m;
  ServeOutsideTable(op, expert.kernel, DeviceSmCountOr(&evaluator, seal.arch), &served);
  if (!served.dispatch) {
    m.result = evaluator.Evaluate(req);
  } else {
    std::vector<EvalResult> parts;
    std::vector<std::string> order;
    for (const ConfigSpec& c : op.configs) {
      EvalRequest part = req;
      part.configs = {c.name};
      part.candidate = served.For(c.name);
      parts.push_back(evaluator.Evaluate(part));
      order.push_back(c.name);
    }
    m.result = MergeResults(parts, order);
  }

  // Every kernel the seal can serve: a dispatch's fallback kernel is measured on every config
  // against the expert (it serves shapes outside the table only where it is slower nowhere), and
  // each kernel is checked on shapes outside the suite that it accepts.
  std::vector<std::pair<std::string, const KernelUnderTest*>> kernels;
  std::set<std::string> listed;  // by cubin
  if (served.dispatch && served.fallback) {
    EvalRequest all = req;
    all.candidate = served.fallback->kernel;
    // The fallback is judged by the seal's own rule, on every config against the expert.
    VerifyVerdict f = DecideVerify(evaluator.Evaluate(all), op.configs.size(), {});
    m.beyond_suite.push_back("fallback: " +
                             (f.holds ? std::string("correct and slower nowhere on the suite") : f.reason));
    if (!f.holds) m.problems.push_back("the fallback: " + f.reason);
    kernels.push_back({"fallback", &served.fallback->kernel});
    listed.insert(served.fallback->kernel.cubin);
  }
  if (!served.dispatch) kernels.push_back({"kernel", &req.candidate});
  for (const ConfigSpec& c : op.configs) {
    const KernelUnderTest& k = served.For(c.name);
    if (served.dispatch && k.library.empty() && listed.insert(k.cubin).second)
      kernels.push_back({"kernel of " + c.name, &k});
  }
  std::random_device entropy;
  const uint64_t seed = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  if (op.ranges.empty())
    m.beyond_suite.push_back("shapes outside the suite: none checked (operator.json declares no \"ranges\")");
  for (const auto& [label, kernel] : kernels) {
    if (op.ranges.empty()) break;
    OutsideCheck c = CheckOutsideShapes(evaluator, op, req.golden, label, *kernel, 3, seed, req.deadline_s);
    m.beyond_suite.push_back(OutsideCheckText(c));
    if (!c.ok) m.problems.push_back(OutsideCheckText(c));
  }

  // The one rule (forgek/verdict.h): the seal holds while it is correct everywhere and slower than
  // the expert reference, measured interleaved now, on no config.
  std::vector<std::pair<std::string, double>> sealed(seal.config_us.begin(), seal.config_us.end());
  m.verdict = DecideVerify(m.result, op.configs.size(), sealed);
  for (const std::string& p : m.problems) {
    m.verdict.reason = m.verdict.holds ? p : m.verdict.reason + "; " + p;
    m.verdict.holds = false;
  }
  return m;
}

SealVerification VerifySeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                            const SealRecord& seal) {
  SealVerification v;
  SealMeasurement m = MeasureSeal(evaluator, store, compiler, op, seal);
  if (!m.error.empty()) {
    v.status = SealVerification::Status::failure;
    v.text = "seal " + seal.id.substr(0, 12) + ": " + m.error + "\n";
    v.json = nlohmann::json{{"seal", seal.id}, {"ok", false}, {"error", m.error}}.dump();
    return v;
  }
  const VerifyVerdict& verdict = m.verdict;
  const bool regression = !verdict.holds;
  std::string text = regression ? verdict.reason + "\n" : "";
  nlohmann::json configs = nlohmann::json::array();
  for (const VerifyConfig& c : verdict.configs) {
    const bool slower = c.vs_expert.direction == Direction::slower;
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-22s %-7s now %10.2f us (sealed %10.2f us, drift %+5.1f%%; expert %10.2f us, %.3fx +- %.1f%%)%s\n",
                  c.config.c_str(), c.correct ? "ok" : "WRONG", c.now_us, c.sealed_us, 100 * c.drift, c.expert_us,
                  c.vs_expert.speedup, 100 * c.vs_expert.noise, slower ? "  SLOWER" : "");
    text += line;
    configs.push_back({{"config", c.config}, {"correct", c.correct}, {"median_us", c.now_us},
                       {"sealed_us", c.sealed_us}, {"drift", c.drift}, {"expert_us", c.expert_us},
                       {"speedup_vs_expert", c.vs_expert.speedup}, {"noise", c.vs_expert.noise},
                       {"slower", slower}});
  }
  for (const std::string& line : m.beyond_suite) text += line + "\n";
  v.status = regression ? SealVerification::Status::regression : SealVerification::Status::holds;
  v.text = "seal " + seal.id.substr(0, 12) + " (" + op.name + ") on " + evaluator.DeviceName() + ": " +
           (regression ? "REGRESSION" : "holds") + "\n" + text;
  v.json = nlohmann::json{{"seal", seal.id}, {"ok", !regression}, {"device", evaluator.DeviceName()},
                          {"outcome", OutcomeName(m.result.outcome)}, {"reason", verdict.reason}, {"configs", configs},
                          {"beyond_suite", m.beyond_suite}}
               .dump();
  return v;
}

}  // namespace forgek
