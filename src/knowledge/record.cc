// From a profiled kernel to stored knowledge: observations, then mechanism hypotheses as evidence.
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/knowledge.h"

namespace forgek {

namespace {

// The peak a kernel's FLOPs count against, from the operator's first input type.
std::string FlopsPeakKey(const OperatorSpec& op) {
  for (const auto& t : op.tensors) {
    if (t.role == TensorRole::output) continue;
    switch (t.dtype) {
      case DType::bf16: return "bf16_tflops";
      case DType::f16: return "fp16_tflops";
      case DType::e4m3:
      case DType::e5m2: return "fp8_tflops";
      case DType::f64: return "fp64_tflops";
      default: return "fp32_tflops";
    }
  }
  return "bf16_tflops";
}

}  // namespace

std::vector<Hypothesis> HypothesesFromObservations(const std::vector<Observation>& obs, const std::string& category,
                                                   const std::string& regime, const std::string& device) {
  // One hypothesis per (mechanism, subject, config): everything seen of a mechanism in one kernel.
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<const Observation*>> groups;
  for (const auto& o : obs)
    if (!o.mechanism.empty()) groups[{o.mechanism, o.operator_name, o.arch, o.subject, o.config}].push_back(&o);
  std::vector<Hypothesis> out;
  for (const auto& [key, members] : groups) {
    const auto& [mech, op, arch, subject, config] = key;
    nlohmann::json settings = nlohmann::json::object();
    std::string seen;
    for (const Observation* o : members) {
      if (o->kind == "name" || o->kind == "launch") settings[o->key] = o->value;
      seen += (seen.empty() ? "" : "; ") + o->kind + " " + o->key + "=" + o->value;
    }
    Hypothesis h;
    h.scope = {arch, category, regime, mech};
    h.evidence.kind = "observation";
    h.evidence.source = subject + " of " + op + (config.empty() ? "" : "/" + config) + ": " + seen;
    h.evidence.operator_name = op;
    h.evidence.config = config;
    h.evidence.settings_json = settings.dump();
    h.evidence.supports = true;
    h.evidence.device = device;
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<Observation> AnalyzeProfile(Store* store, const KnowledgeBase& kb, const OperatorSpec& op,
                                        const std::string& arch, const std::string& device,
                                        const KernelProfile& profile) {
  HardwareSpec hw;
  std::string why;
  bool have_hw = ResolveHardware(store, kb, arch, device, &hw, &why);
  return AnalyzeKernel(profile, op.name, arch, have_hw ? &hw : nullptr, kb, FlopsPeakKey(op));
}

bool AnalyzeAndRecord(Store& store, const KnowledgeBase& kb, const OperatorSpec& op, const std::string& arch,
                      const std::string& device, const KernelProfile& profile, std::vector<Observation>* observations,
                      std::string* err) {
  HardwareSpec hw;
  std::string why;
  bool have_hw = ResolveHardware(&store, kb, arch, device, &hw, &why);
  std::vector<Observation> obs = AnalyzeKernel(profile, op.name, arch, have_hw ? &hw : nullptr, kb, FlopsPeakKey(op));
  std::string regime = ShapeRegime(op, profile.config);
  std::string subject = profile.label.empty() ? "reference" : profile.label;
  bool ok = store.Transaction(
      [&](std::string* e) {
        if (!store.UpsertOperator({op.name, op.category, op.description}, e)) return false;
        ProfileRecord rec;
        rec.operator_name = op.name;
        rec.arch = arch;
        rec.subject = subject;
        rec.profile = profile;
        if (!store.AddProfile(&rec, e)) return false;
        int added = 0;
        if (!store.AddObservations(&obs, &added, e)) return false;
        for (auto& h : HypothesesFromObservations(obs, op.category, regime, have_hw ? hw.name : device))
          if (!store.AddEvidence(h.scope, h.evidence, nullptr, e)) return false;
        return true;
      },
      err);
  if (ok && observations) *observations = obs;
  return ok;
}

bool AnalyzeAndRecord(Store& store, const OperatorSpec& op, const std::string& arch, const KernelProfile& profile,
                      std::vector<Observation>* observations, std::string* err) {
  static std::mutex mu;
  static KnowledgeBase kb;
  static bool loaded = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!loaded) {
      Diagnostics diags;
      if (!LoadKnowledgeBase(KnowledgeDir(), &kb, &diags)) {
        if (err) *err = "cannot load the shipped knowledge: " + FormatDiagnostics(diags);
        return false;
      }
      loaded = true;
    }
  }
  return AnalyzeAndRecord(store, kb, op, arch, "", profile, observations, err);
}

}  // namespace forgek
