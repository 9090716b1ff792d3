// Confirm and seal a dispatch: the fastest kernel per config, its fallback checked, the table sealed.
#include "run_state.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/seal/dispatch.h"
#include "forgek/core/params.h"
#include "forgek/verdict/verdict.h"
#include "forgek/core/json_parse.h"

namespace forgek {

std::vector<DispatchCandidate> RunState::DispatchCandidates() const {
  std::vector<DispatchCandidate> out;
  for (const Best& m : measured_) out.push_back({"attempt " + std::to_string(m.iteration + 1), m.result});
  if (ExpertCandidate() >= 0) out.push_back({"expert reference", expert_vs_incumbent_});
  return out;
}

RunState::Best RunState::IncumbentAsBest() const {
  Best b;
  b.hash = incumbent_.candidate_hash;
  b.cubin_sha256 = incumbent_.cubin_sha256;
  b.kernel = incumbent_.kernel;
  if (incumbent_.has_source) b.proposal.candidate = incumbent_.source;
  nlohmann::json params = ParseJsonLenient(incumbent_.params_json);
  if (params.is_object())
    for (auto it = params.begin(); it != params.end(); ++it)
      if (it->is_number_integer()) b.proposal.params[it.key()] = it->get<int64_t>();
  b.iteration = -1;  // not an attempt of this run
  return b;
}

int RunState::ExpertCandidate() const {
  if (incumbent_.seal_id.empty() || !OutcomeTimed(expert_vs_incumbent_.outcome)) return -2;
  return static_cast<int>(measured_.size());
}

const KernelUnderTest* RunState::DispatchKernelFor(int candidate, const std::string& config) const {
  if (candidate < 0) return &incumbent_.For(config);
  if (candidate == ExpertCandidate()) return &expert_.kernel;
  return &measured_[candidate].kernel;
}

nlohmann::json RunState::DispatchMetadata(const Dispatch& d, bool fallback_reference,
                                          std::map<std::string, int>* kernel_of_config) const {
  nlohmann::json kernels = nlohmann::json::array();
  std::map<std::string, int> index;  // "candidate\nparams" or "reference" -> entry
  auto entry = [&](const std::string& key, nlohmann::json value) {
    auto [it, fresh] = index.emplace(key, static_cast<int>(kernels.size()));
    if (fresh) kernels.push_back(std::move(value));
    return it->second;
  };
  auto reference = [&] {
    return entry("reference", {{"reference", expert_.label}});
  };
  auto candidate = [&](const std::string& hash, const std::string& params_json, const std::string& sha,
                       const std::string& family, const std::string& label) {
    nlohmann::json params = ParseJsonLenient(params_json);
    return entry(hash + "\n" + params_json, {{"candidate", hash},
                                             {"params", params.is_object() ? params : nlohmann::json::object()},
                                             {"cubin_sha256", sha},
                                             {"family", family},
                                             {"label", label}});
  };
  // The kernel the incumbent runs on `config` ("": its fallback, for shapes outside its table).
  auto incumbent_entry = [&](const std::string& config) {
    if (incumbent_.seal_id.empty() || incumbent_.reference_configs.count(config)) return reference();
    if (config.empty() && incumbent_.fallback_reference) return reference();
    if (config.empty() && incumbent_.fallback) {
      const DispatchKernel& f = *incumbent_.fallback;
      return candidate(f.candidate_hash, f.params_json, f.cubin_sha256, f.family, "from " + incumbent_.label);
    }
    auto it = incumbent_.per_config.find(config);
    if (it != incumbent_.per_config.end())
      return candidate(it->second.candidate_hash, it->second.params_json, it->second.cubin_sha256, it->second.family,
                       "from " + incumbent_.label);
    return candidate(incumbent_.candidate_hash, incumbent_.params_json, incumbent_.cubin_sha256, "",
                     "from " + incumbent_.label);
  };
  auto measured_entry = [&](int i) {
    if (i == ExpertCandidate()) return reference();
    const Best& m = measured_[i];
    return candidate(m.hash, ParamsJson(m.proposal.params), m.cubin_sha256, m.proposal.family, KernelText(i));
  };
  nlohmann::json table = nlohmann::json::array();
  for (const DispatchChoice& c : d.configs) {
    int k = c.candidate >= 0 ? measured_entry(c.candidate) : incumbent_entry(c.config);
    (*kernel_of_config)[c.config] = k;
    table.push_back({{"config", c.config}, {"kernel", k}, {"why", c.reason}});
  }
  int fallback = fallback_reference ? reference() : d.fallback >= 0 ? measured_entry(d.fallback) : incumbent_entry("");
  return {{"kernels", kernels}, {"table", table}, {"fallback", fallback}, {"fallback_why", d.fallback_reason}};
}

bool RunState::SealDispatch(std::string* err) {
  Dispatch d = AssembleDispatch(ConfigNames(), DispatchCandidates(), opts_.min_gain);
  std::string words;
  summary_->dispatch.clear();
  // Each row with the mechanisms of the kernel that serves it: the incumbent's own (none for a
  // library reference) where it keeps a config.
  auto mechanisms_of = [&](int candidate, const std::string& config) {
    return DispatchKernelFor(candidate, config)->manifest.mechanisms;
  };
  for (const DispatchChoice& c : d.configs) {
    words += (words.empty() ? "" : "; ") + c.config + ": " + c.reason;
    summary_->dispatch.push_back({c.config, KernelText(c.candidate), c.reason, mechanisms_of(c.candidate, c.config)});
  }
  summary_->dispatch.push_back(
      {"(other shapes)", KernelText(d.fallback), d.fallback_reason, mechanisms_of(d.fallback, "")});
  std::string& reason = summary_->seal_reason;
  reason += (reason.empty() ? "" : "; ") + std::string("per config: ") + words;
  if (!d.AnyCandidate()) {
    summary_->dispatch.clear();  // the incumbent serves every config: there is no dispatch
    return true;
  }
  // One candidate on every config is a single winner, confirmed as such; no sealing, no dispatch.
  if (!d.Mixed() || !opts_.allow_seal || !opts_.configs.empty()) return true;
  // The assembled dispatch is confirmed on fresh seeds, each config with the kernel serving it,
  // interleaved against the incumbent, and judged by the one sealing rule.
  EvalRequest req;
  req.op = &op_;
  req.golden = golden_;
  req.seeds = opts_.seeds + 1;
  req.deadline_s = opts_.deadline_s;
  EvalResult confirmation = ConfirmDispatch(d, [&](int kernel, const std::vector<std::string>& configs) {
    EvalRequest part = req;
    part.configs = configs;
    return EvaluateByConfig(
        services_.evaluator, part,
        [&](const std::string& c) { return DispatchKernelFor(kernel, c); },
        [&](const std::string& c) { return &incumbent_.For(c); });
  });
  SealVerdict verdict = DecideSeal(confirmation, op_.configs.size(), opts_.min_gain);
  if (!verdict.seal) {
    if (OutcomeTimed(confirmation.outcome)) FillConfigComparisons(confirmation);
    reason += "; the dispatch did not hold on confirmation: " + verdict.reason;
    return true;
  }
  bool fallback_reference = false;
  std::string why;
  if (!CheckServedKernels(&d, &fallback_reference, &why)) {
    reason += "; the dispatch is not sealed: " + why;
    return true;
  }
  const int measured = static_cast<int>(measured_.size());
  // The seal's own kernel (what a reader that knows no dispatch runs): the fallback when it is a
  // candidate of this run, else this run's candidate serving the most configs, else (the expert
  // and the sealed incumbent share the table) the incumbent's own kernel.
  std::optional<Best> incumbent_kernel;  // built only when no candidate of this run serves
  const Best* primary = d.fallback >= 0 && d.fallback < measured ? &measured_[d.fallback] : nullptr;
  if (!primary) {
    std::map<int, int> served;
    for (const DispatchChoice& c : d.configs)
      if (c.candidate >= 0 && c.candidate < measured) ++served[c.candidate];
    if (!served.empty())
      primary = &measured_[std::max_element(served.begin(), served.end(), [](const auto& a, const auto& b) {
                             return a.second < b.second;
                           })->first];
  }
  if (!primary) primary = &incumbent_kernel.emplace(IncumbentAsBest());
  std::map<std::string, int> kernel_of_config;
  nlohmann::json dispatch = DispatchMetadata(d, fallback_reference, &kernel_of_config);
  std::vector<std::string> mechanisms;
  for (int k : d.Kernels())
    for (const std::string& m : DispatchKernelFor(k, "")->manifest.mechanisms)
      if (std::find(mechanisms.begin(), mechanisms.end(), m) == mechanisms.end()) mechanisms.push_back(m);
  SealOrigin origin;
  origin.family = primary->proposal.family;
  origin.mechanisms = std::move(mechanisms);
  origin.rationale = "dispatch: per config, the fastest kernel the run measured there";
  origin.dispatch_json = dispatch.dump();
  origin.kernel_of_config = std::move(kernel_of_config);
  if (!WriteSeal(*primary, confirmation, verdict, std::move(origin), err)) return false;
  std::map<const KernelUnderTest*, std::shared_ptr<const KernelUnderTest>> copies;
  for (const DispatchChoice& c : d.configs) {
    const KernelUnderTest* k = DispatchKernelFor(c.candidate, c.config);
    std::shared_ptr<const KernelUnderTest>& copy = copies[k];
    if (!copy) copy = std::make_shared<const KernelUnderTest>(*k);
    sealed_kernels_[c.config] = copy;
  }
  reason = "sealed a dispatch of " + std::to_string(DistinctServingKernels(d)) + " kernels: " + verdict.reason;
  int expert_configs = 0;
  for (const DispatchChoice& c : d.configs) expert_configs += c.candidate == ExpertCandidate();
  if (expert_configs > 0)
    reason += "; the expert reference serves " + std::to_string(expert_configs) + " config" +
              (expert_configs > 1 ? "s" : "") + ", where it measured faster than " + incumbent_.label;
  return true;
}

bool RunState::CheckServedKernels(Dispatch* d, bool* fallback_reference, std::string* why) {
  // The fallback serves shapes outside the table: it is measured on every config against the
  // expert reference and checked on shapes outside the suite, and the expert reference takes its
  // place where either fails.
  const int measured = static_cast<int>(measured_.size());
  const KernelUnderTest* fallback_kernel = nullptr;  // null: the expert reference
  std::string fallback_label;
  if (d->fallback >= 0 && d->fallback < measured) {
    fallback_kernel = &measured_[d->fallback].kernel;
    fallback_label = KernelText(d->fallback);
  } else if (d->fallback < 0 && !incumbent_.seal_id.empty()) {
    fallback_kernel = incumbent_.FallbackKernel();
    fallback_label = "the fallback of " + incumbent_.label;
  }
  std::string failed;
  if (fallback_kernel && (!FallbackHolds(*fallback_kernel, &failed) ||
                          !CheckOutsideSuite({{fallback_label + " (the fallback)", fallback_kernel}}, &failed))) {
    d->fallback_reason = fallback_label + " " + failed + ": the expert reference serves shapes outside the table";
    fallback_kernel = nullptr;
    if (d->fallback >= 0) d->fallback = -1;
    summary_->dispatch.back() = {"(other shapes)", "expert reference (" + expert_.label + ")", d->fallback_reason, {}};
  }
  *fallback_reference = fallback_kernel == nullptr;
  // Each other kernel serving a config is checked on shapes outside the suite as well (a seal's
  // kernels are exported for use beyond it): one wrong there stops the dispatch.
  std::vector<std::pair<std::string, const KernelUnderTest*>> table_kernels;
  std::set<std::string> listed;  // by cubin: a kernel serving several configs is checked once
  if (fallback_kernel) listed.insert(fallback_kernel->cubin);
  for (const DispatchChoice& c : d->configs) {
    const KernelUnderTest* k = DispatchKernelFor(c.candidate, c.config);
    if (k->library.empty() && listed.insert(k->cubin).second)
      table_kernels.push_back({c.candidate < 0 ? "the kernel of " + c.config + " from " + incumbent_.label
                                               : KernelText(c.candidate),
                               k});
  }
  return CheckOutsideSuite(table_kernels, why);
}

int RunState::DistinctServingKernels(const Dispatch& d) const {
  std::set<std::string> serving;  // a library call counted once
  for (const DispatchChoice& c : d.configs) {
    const KernelUnderTest* k = DispatchKernelFor(c.candidate, c.config);
    serving.insert(k->library.empty() ? k->cubin : "library " + k->library);
  }
  return static_cast<int>(serving.size());
}

bool RunState::DispatchBeatsBestWinner() const {
  if (winners_.empty()) return true;
  Dispatch d = AssembleDispatch(ConfigNames(), DispatchCandidates(), opts_.min_gain);
  if (!d.Mixed()) return false;
  // The dispatch's search geomean: per config its kernel's speedup, 1 where the incumbent stays.
  std::vector<double> speedups;
  for (const DispatchChoice& c : d.configs) speedups.push_back(c.candidate >= 0 ? c.best.speedup : 1.0);
  return Geomean(speedups) > winners_.front().result.geomean_speedup * (1 + opts_.min_gain);
}

}  // namespace forgek
