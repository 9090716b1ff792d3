// Analysis of one kernel profile into observations: launch, name, metrics, SASS classes, roofline.
#include <algorithm>

#include "analysis_internal.h"

namespace forgek {

namespace analysis {

namespace {

// A catalogue opcode prefix matches a class exactly or as the head of a dotted/underscored class.
bool OpcodeMatches(const std::string& cls, const std::string& prefix) {
  if (cls == prefix) return true;
  return cls.size() > prefix.size() && cls.compare(0, prefix.size(), prefix) == 0 &&
         (cls[prefix.size()] == '.' || cls[prefix.size()] == '_');
}

}  // namespace

void AnalyzeSass(const std::string& sass, const KnowledgeBase& kb, ObservationSink* sink) {
  if (sass.empty()) return;
  std::map<std::string, int> classes = ClassifySass(sass);
  for (const auto& [cls, count] : classes) {
    // The most specific opcode wins: UTMALDG.MULTICAST is multicast before it is TMA.
    std::string mech;
    size_t best = 0;
    for (const auto& m : kb.mechanisms) {
      if (!m.archs.empty() && std::find(m.archs.begin(), m.archs.end(), sink->arch()) == m.archs.end()) continue;
      for (const auto& op : m.sass_opcodes)
        if (OpcodeMatches(cls, op) && op.size() > best) mech = m.id, best = op.size();
    }
    // Only classes that reveal a mechanism, plus barriers: the plain arithmetic is noise here.
    if (mech.empty() && cls != "BAR" && cls != "MEMBAR") continue;
    sink->Add("sass", cls, std::to_string(count), count, mech, std::to_string(count) + " " + cls + " instructions");
  }
}

void AnalyzeRoofline(const KernelProfile& p, const HardwareSpec& hw, const std::string& flops_peak,
                     ObservationSink* sink) {
  if (p.time_us <= 0 || (p.flops <= 0 && p.bytes <= 0)) return;
  double tflops = hw.peaks.ByKey(flops_peak), gbps = hw.peaks.BandwidthGbps();
  double t = p.time_us * 1e-6;
  std::string src = std::string(hw.calibrated ? "calibrated" : "datasheet") + " peaks of " + hw.name;
  double sol_compute = tflops > 0 ? p.flops / (tflops * 1e12) : 0;
  double sol_memory = gbps > 0 ? p.bytes / (gbps * 1e9) : 0;
  double sol = std::max(sol_compute, sol_memory);
  if (sol <= 0) return;
  std::string bound = sol_compute >= sol_memory ? "compute" : "memory";
  if (p.bytes > 0 && tflops > 0 && gbps > 0) {
    double intensity = p.flops / p.bytes, ridge = tflops * 1e12 / (gbps * 1e9);
    sink->Add("roofline", "intensity", Num(intensity, 1), intensity, "",
              "FLOPs per byte; the ridge point is " + Num(ridge, 1) + " (" + src + ")");
  }
  sink->Add("roofline", "bound", bound, 0, "", "speed-of-light time is set by " + bound + " (" + src + ")");
  double pct = 100.0 * sol / t;
  sink->Add("roofline", "sol_pct", Num(pct), pct, "",
            Num(sol * 1e6, 2) + " us speed of light vs " + Num(p.time_us, 2) + " us measured");
  if (p.flops > 0) sink->Add("roofline", "tflops", Num(p.flops / t / 1e12), p.flops / t / 1e12, "", "achieved");
  if (p.bytes > 0) sink->Add("roofline", "gbps", Num(p.bytes / t / 1e9), p.bytes / t / 1e9, "", "achieved");
}

}  // namespace analysis

std::vector<Observation> AnalyzeKernel(const KernelProfile& profile, const std::string& operator_name,
                                       const std::string& arch, const HardwareSpec* hw, const KnowledgeBase& kb,
                                       const std::string& flops_peak) {
  std::vector<Observation> out;
  analysis::ObservationSink sink(profile, operator_name, arch, &out);
  analysis::AnalyzeLaunch(profile, hw, &sink);
  analysis::AnalyzeMetrics(profile, &sink);
  analysis::AnalyzeSass(profile.sass, kb, &sink);
  if (hw) analysis::AnalyzeRoofline(profile, *hw, flops_peak, &sink);
  return out;
}

}  // namespace forgek
