// The parts of kernel analysis, each turning one kind of measurement into observations.
#pragma once

#include <string>
#include <vector>

#include "forgek/knowledge/knowledge.h"

namespace forgek::analysis {

// Appends observations with the common fields (operator, arch, subject, config) already set.
class ObservationSink {
 public:
  ObservationSink(const KernelProfile& p, const std::string& operator_name, const std::string& arch,
                  std::vector<Observation>* out)
      : profile_(p), operator_name_(operator_name), arch_(arch), out_(out) {}
  void Add(const std::string& kind, const std::string& key, const std::string& value, double number,
           const std::string& mechanism, const std::string& evidence);
  const std::string& arch() const { return arch_; }

 private:
  const KernelProfile& profile_;
  std::string operator_name_, arch_;
  std::vector<Observation>* out_;
};

// The launch that dominates the call (longest, else first), or null when there is none.
const KernelLaunchRecord* DominantLaunch(const KernelProfile& p);

void AnalyzeLaunch(const KernelProfile& p, const HardwareSpec* hw, ObservationSink* sink);
void AnalyzeName(const KernelLaunchRecord& launch, ObservationSink* sink);
void AnalyzeMetrics(const KernelProfile& p, ObservationSink* sink);
void AnalyzeSass(const std::string& sass, const KnowledgeBase& kb, ObservationSink* sink);
void AnalyzeRoofline(const KernelProfile& p, const HardwareSpec& hw, const std::string& flops_peak, ObservationSink* sink);

std::string Dims(const int64_t v[3]);
std::string Num(double v, int digits = 1);

}  // namespace forgek::analysis
