// Confirm and seal: the best re-measured on fresh seeds, checked beyond the suite, and sealed with its binaries.
#include "run_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "forgek/seal/dispatch.h"
#include "forgek/core/hash.h"
#include "forgek/seal/outside_shapes.h"
#include "forgek/seal/seal.h"
#include "forgek/core/torch_helper.h"
#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"
#include "run_text.h"

namespace forgek {

bool RunState::SealBest(std::string* err) {
  if (!SealingAllowed()) return true;
  // A search measurement can be lucky: each winner, best first, is confirmed before it is sealed,
  // and the next one gets its chance when a confirmation does not hold.
  std::string reasons;
  bool shown = false;
  for (const Best& winner : winners_) {
    bool sealed = false;
    std::string why;
    EvalResult confirmation;
    if (!ConfirmAndSeal(winner, &confirmation, &sealed, &why, err)) return false;
    if (sealed) return true;
    // The summary's per-config table shows the first confirmation that failed: the best winner's.
    if (!shown && OutcomeTimed(confirmation.outcome)) {
      FillConfigComparisons(confirmation);
      shown = true;
    }
    reasons += (reasons.empty() ? "" : "; ") + std::string("attempt ") + std::to_string(winner.iteration + 1) +
               " (" + Fmt3(winner.result.geomean_speedup) + "x in the search): " + why;
  }
  summary_->seal_reason = "not sealed: " + std::to_string(winners_.size()) +
                          (winners_.size() == 1 ? " candidate" : " candidates") +
                          " faster in the search, none held on confirmation: " + reasons;
  return true;
}

bool RunState::ConfirmAndSeal(const Best& winner, EvalResult* confirmation_out, bool* sealed, std::string* why,
                              std::string* err) {
  *sealed = false;
  // Confirmation on fresh seeds with a fresh timing: a lucky measurement is not sealed.
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  *confirmation_out = EvaluateByConfig(
      services_.evaluator, req, [&](const std::string&) { return &winner.kernel; },
      [&](const std::string& c) { return &incumbent_.For(c); });
  const EvalResult& confirmation = *confirmation_out;
  SealVerdict verdict = DecideSeal(confirmation, op_.configs.size(), opts_.min_gain);
  if (!verdict.seal) {
    *why = verdict.reason;
    return true;
  }
  // A seal serves every shape its kernel accepts: it must be right beyond the suite too.
  if (!CheckOutsideSuite({{KernelText(winner), &winner.kernel}}, why)) return true;
  SealOrigin origin;
  origin.family = winner.proposal.family;
  origin.mechanisms = winner.proposal.candidate.manifest.mechanisms;
  origin.rationale = winner.proposal.rationale;
  if (!WriteSeal(winner, confirmation, verdict, std::move(origin), err)) return false;
  auto sealed_kernel = std::make_shared<const KernelUnderTest>(winner.kernel);
  for (const std::string& c : ConfigNames()) sealed_kernels_[c] = sealed_kernel;
  *sealed = true;
  return true;
}

bool RunState::WriteSeal(const Best& primary, const EvalResult& confirmation, const SealVerdict& verdict,
                         SealOrigin origin, std::string* err) {
  FillConfigComparisons(confirmation);
  origin.operator_name = op_.name;
  origin.arch = opts_.arch;
  origin.candidate_hash = primary.hash;
  origin.cubin_sha256 = primary.cubin_sha256;
  origin.params = primary.proposal.params;
  origin.parent = incumbent_.seal_id;
  origin.incumbent_label = incumbent_.label;
  origin.run_id = run_id_;
  origin.toolchain = "nvrtc " + Compiler::NvrtcVersion();
  origin.driver = driver_;
  origin.device = device_;
  SealRecord seal = BuildSealRecord(origin, confirmation, verdict);
  // The seal and its binaries in one transaction: a seal is never kept without the cubins it names.
  if (services_.store &&
      !services_.store->Transaction(
          [&](std::string* e) { return services_.store->AddSeal(seal, e) && KeepSealedCubins(seal, e); }, err))
    return false;
  summary_->seal_id = seal.id;
  summary_->seal_reason = "sealed: " + verdict.reason;
  summary_->sealed_candidate_hash = primary.hash;
  summary_->sealed_kernel = KernelText(primary);
  summary_->sealed_mechanisms = origin.mechanisms;
  return true;
}

bool RunState::KeepSealedCubins(const SealRecord& seal, std::string* err) {
  // Every binary this run measured, by the SHA-256 of its bytes.
  std::map<std::string, const std::string*> cubins;
  for (const Best& m : measured_)
    if (m.kernel.library.empty() && !m.kernel.cubin.empty()) cubins.emplace(m.cubin_sha256, &m.kernel.cubin);
  auto offer = [&](const KernelUnderTest& k) {
    if (k.library.empty() && !k.cubin.empty()) cubins.emplace(Sha256Hex(k.cubin), &k.cubin);
  };
  offer(incumbent_.kernel);
  for (const auto& [config, k] : incumbent_.per_config) offer(k.kernel);
  if (incumbent_.fallback) offer(incumbent_.fallback->kernel);
  // Every binary the seal names: its own and those of its dispatch table.
  std::vector<std::string> named;
  if (!SealCubins(seal, &named, err)) return false;
  const std::string toolchain = "nvrtc " + Compiler::NvrtcVersion();
  for (const std::string& sha : named) {
    if (sha.empty()) continue;
    auto it = cubins.find(sha);
    if (it == cubins.end()) {
      // An incumbent's kernel rebuilt by another toolchain than the one that sealed it: what was
      // measured is not the binary the table names, and the store keeps none of it to copy.
      spdlog::warn("seal {}: no cubin {} among this run's kernels; export will rebuild it", seal.id.substr(0, 12),
                   sha.substr(0, 12));
      continue;
    }
    if (!services_.store->PutCubin(sha, *it->second, toolchain, false, err)) return false;
  }
  return true;
}

bool RunState::FallbackHolds(const KernelUnderTest& kernel, std::string* why) {
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.candidate = kernel;
  req.incumbent = expert_.kernel;
  req.configs = ConfigNames();
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  EvalResult r = services_.evaluator->Evaluate(req);
  if (!OutcomeTimed(r.outcome)) {
    *why = std::string("failed on the suite against the expert reference (") + OutcomeName(r.outcome) +
           (r.detail.empty() ? "" : ": " + r.detail) + ")";
    return false;
  }
  for (const ConfigResult& c : r.configs) {
    TimeComparison t = CompareConfig(c, opts_.min_gain);
    if (t.timed && t.direction == Direction::slower) {
      *why = "is slower than the expert reference on " + c.config + " (" + Fmt3(t.speedup) + "x, " +
             DirectionWords(t.direction) + ")";
      return false;
    }
  }
  return true;
}

bool RunState::CheckOutsideSuite(const std::vector<std::pair<std::string, const KernelUnderTest*>>& kernels,
                                 std::string* why) {
  if (op_.ranges.empty()) {
    const std::string none = "shapes outside the suite: none checked (operator.json declares no \"ranges\")";
    if (std::find(summary_->outside_shapes.begin(), summary_->outside_shapes.end(), none) ==
        summary_->outside_shapes.end())
      summary_->outside_shapes.push_back(none);
    return true;
  }
  const uint64_t seed = std::hash<std::string>{}(run_id_);
  for (const auto& [label, kernel] : kernels) {
    if (!kernel->library.empty()) continue;  // a library call takes every shape the operator allows
    OutsideCheck c = CheckOutsideShapes(*services_.evaluator, op_, golden_, label, *kernel, 3, seed, opts_.deadline_s);
    summary_->outside_shapes.push_back(OutsideCheckText(c));
    if (!c.ok) {
      *why = OutsideCheckText(c);
      return false;
    }
  }
  return true;
}

void RunState::MeasureTorchYardstick() {
  const std::string yardstick = YardstickOf(op_);
  if (yardstick.empty() || !services_.evaluator) return;
  const bool sealed = !summary_->seal_id.empty() && !sealed_kernels_.empty();
  const KernelUnderTest none;  // the kernel alone is timed: no incumbent
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.seeds = 1;
  req.deadline_s = opts_.deadline_s;
  req.torch_yardstick = yardstick;
  EvalResult r = EvaluateByConfig(
      services_.evaluator, req,
      [&](const std::string& c) {
        auto it = sealed_kernels_.find(c);
        return sealed && it != sealed_kernels_.end() ? it->second.get() : &incumbent_.For(c);
      },
      [&](const std::string&) { return &none; });
  const std::string kernel = sealed ? "seal" : "incumbent";
  if (r.configs.empty()) {
    summary_->degraded.push_back({"yardstick", std::string("no config measured (") + OutcomeName(r.outcome) +
                                                           (r.detail.empty() ? "" : ": " + r.detail) + ")"});
    return;
  }
  for (const ConfigResult& c : r.configs) {
    auto it = std::find_if(summary_->configs.begin(), summary_->configs.end(),
                           [&](const ConfigComparison& cc) { return cc.config == c.config; });
    if (it == summary_->configs.end()) {
      summary_->configs.push_back(ConfigComparison{});
      it = summary_->configs.end() - 1;
      it->config = c.config;
    }
    it->torch = c.torch;
    it->torch_kernel = kernel;
    it->torch_kernel_us = c.candidate.median_us;
    if (!c.torch.asked())
      it->torch.eager_error = it->torch.compile_error =
          std::string("not measured: ") + OutcomeName(r.outcome) + (r.detail.empty() ? "" : ": " + r.detail);
  }
}

bool RunState::SealingAllowed() {
  if (!opts_.allow_seal) {
    summary_->seal_reason = "sealing disabled (--no-seal)";
    return false;
  }
  if (!opts_.configs.empty()) {
    summary_->seal_reason = "run limited to some configs (--config); a seal must serve every config";
    return false;
  }
  return true;
}

}  // namespace forgek
