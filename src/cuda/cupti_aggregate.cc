// Combining per-kernel range-profiler metrics into one set for a whole piece of work.
#include <set>

#include "forgek/cuda/cupti.h"

namespace forgek {
namespace {

constexpr const char* kDuration = "gpu__time_duration.sum";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

MetricValues AggregateKernelMetrics(const std::vector<MetricValues>& kernels) {
  bool weighted = !kernels.empty();
  std::set<std::string> names;
  for (const MetricValues& k : kernels) {
    auto d = k.find(kDuration);
    weighted = weighted && d != k.end() && d->second > 0;
    for (const auto& [name, value] : k) names.insert(name);
  }
  MetricValues out;
  for (const std::string& name : names) {
    const bool additive = EndsWith(name, ".sum");
    double total = 0, weight = 0;
    for (const MetricValues& k : kernels) {
      auto it = k.find(name);
      if (it == k.end()) continue;
      const double w = additive ? 1.0 : weighted ? k.at(kDuration) : 1.0;
      total += additive ? it->second : w * it->second;
      weight += w;
    }
    out[name] = additive || weight == 0 ? total : total / weight;
  }
  return out;
}

}  // namespace forgek
