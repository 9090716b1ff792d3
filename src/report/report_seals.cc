// Per seal: its summary and its configs on the roofline (the operator's flops and bytes, as SOL %
// counts them, at the sealed times); per device the bounds those points sit under.
#include <algorithm>

#include "forgek/core/expr.h"
#include "report_build.h"
#include "report_text.h"

namespace forgek::report_build {
namespace {

bool Formula(const std::string& text, const ConfigSpec& c, double* out) {
  int64_t v = 0;
  Diagnostic d;
  if (text.empty() || !EvalExpression(text, c.values, &v, &d)) return false;
  *out = static_cast<double>(v);
  return true;
}

// The roofline points of `seal` under `op`, and why any config is left out.
void Roofline(const SealRecord& seal, const OperatorSpec& op, SealSummary* s) {
  std::vector<std::string> missing, no_arithmetic;
  for (const auto& [config, us] : seal.config_us) {
    const ConfigSpec* c = op.FindConfig(config);
    if (!c) {
      missing.push_back(config);
      continue;
    }
    RooflinePoint p;
    p.config = config;
    p.time_us = us;
    if (!Formula(op.flops, *c, &p.flops) || !Formula(op.bytes, *c, &p.bytes) || !(p.flops > 0) || !(p.bytes > 0) ||
        !(us > 0)) {
      no_arithmetic.push_back(config);
      continue;
    }
    p.intensity = p.flops / p.bytes;
    p.tflops = p.flops / us / 1e6;  // flop per us is 1e6 flop/s; 1e12 per TFLOP
    s->roofline.push_back(p);
  }
  // In the operator's config order, as every table shows them.
  auto rank = [&](const std::string& name) {
    for (size_t i = 0; i < op.configs.size(); ++i)
      if (op.configs[i].name == name) return i;
    return op.configs.size();
  };
  std::stable_sort(s->roofline.begin(), s->roofline.end(),
                   [&](const RooflinePoint& a, const RooflinePoint& b) { return rank(a.config) < rank(b.config); });
  if (!no_arithmetic.empty())
    s->note += "no flops, bytes or time to place " + report_text::Join(no_arithmetic) + " on the roofline; ";
  if (!missing.empty()) s->note += "not configs of the operator now: " + report_text::Join(missing) + "; ";
  if (!s->note.empty()) s->note.resize(s->note.size() - 2);
}

}  // namespace

bool SealsOf(Store& store, const Scope& scope, const std::map<std::string, OperatorSpec>& operators,
             std::vector<SealSummary>* seals, std::vector<DeviceBounds>* devices, std::vector<std::string>* notes,
             std::string* err) {
  // Each device's record, read once; found=false for one the store lacks or holds without peaks.
  std::map<std::pair<std::string, std::string>, std::pair<bool, DeviceRecord>> records;
  for (const SealRecord& seal : scope.seals) {
    SealSummary s;
    s.id = seal.id;
    s.op = seal.operator_name;
    s.arch = seal.arch;
    s.device = seal.device;
    s.run_id = seal.run_id;
    s.parent = seal.parent;
    s.created_at = seal.created_at;
    s.geomean_speedup = seal.geomean_speedup;
    const nlohmann::json meta = SealMetadata(seal);
    if (meta.contains("mechanisms") && meta["mechanisms"].is_array())
      for (const nlohmann::json& m : meta["mechanisms"])
        if (m.is_string()) s.mechanisms.push_back(m.get<std::string>());
    auto spec = operators.find(seal.operator_name);
    if (spec == operators.end()) {
      s.note = "no operator folder for " + seal.operator_name + ": its flops and bytes are unknown";
      seals->push_back(std::move(s));
      continue;
    }
    const DType dtype = spec->second.ComputeDType();
    s.compute_dtype = DTypeName(dtype);
    Roofline(seal, spec->second, &s);
    seals->push_back(s);

    const std::pair<std::string, std::string> key{seal.device, seal.arch};
    auto rec = records.find(key);
    if (rec == records.end()) {
      DeviceRecord d;
      bool found = false;
      if (!seal.device.empty() && !store.FindDevice(seal.device, seal.arch, &d, &found, err)) return false;
      rec = records.emplace(key, std::make_pair(found && d.peaks.valid(), d)).first;
      if (!rec->second.first)
        notes->push_back("no peaks of " + (seal.device.empty() ? std::string("an unnamed device") : seal.device) +
                         " (" + seal.arch + ") in the store: its seals are drawn without a roofline " +
                         "(`forgek doctor --calibrate` measures them)");
    }
    if (!rec->second.first) continue;
    const DeviceRecord& d = rec->second.second;
    auto b = std::find_if(devices->begin(), devices->end(),
                          [&](const DeviceBounds& x) { return x.name == d.name && x.arch == d.arch; });
    if (b == devices->end()) {
      DeviceBounds bounds;
      bounds.name = d.name;
      bounds.arch = d.arch;
      bounds.bandwidth_gbps = d.peaks.BandwidthGbps();
      bounds.launch_floor_us = d.peaks.launch_floor_us;
      bounds.calibrated = d.calibrated;
      devices->push_back(bounds);
      b = devices->end() - 1;
    }
    // One compute ceiling per dtype that bounds a seal on this device.
    const double tflops = d.peaks.TflopsFor(dtype);
    if (tflops > 0 && std::none_of(b->ceilings.begin(), b->ceilings.end(),
                                   [&](const ComputeCeiling& c) { return c.dtype == s.compute_dtype; }))
      b->ceilings.push_back({s.compute_dtype, tflops});
  }
  return true;
}

}  // namespace forgek::report_build
