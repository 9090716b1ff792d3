// The first valid instance and the corners of a candidate's param domains.
#include "forgek/core/param_corners.h"

#include <algorithm>

namespace forgek {

bool ValidUnderSomeConfig(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& params) {
  for (const ConfigSpec& config : op.configs) {
    std::string why;
    // No device here: the constraints of a family are checked at its arch's nominal SM count.
    if (ConstraintsHold(m, params, config.values, NominalSmCount(m), &why)) return true;
  }
  return false;
}

bool FirstValidInstance(const CandidateManifest& m, const OperatorSpec& op, ParamAssignment* out) {
  constexpr size_t kMaxTried = 100000;
  std::vector<size_t> index(m.params.size(), 0);
  for (const ParamSpec& p : m.params)
    if (p.values.empty()) return false;
  for (size_t tried = 0; tried < kMaxTried; ++tried) {
    ParamAssignment a;
    for (size_t i = 0; i < m.params.size(); ++i) a[m.params[i].name] = m.params[i].values[index[i]];
    if (ValidUnderSomeConfig(m, op, a)) {
      *out = std::move(a);
      return true;
    }
    size_t i = m.params.size();
    while (i > 0 && ++index[i - 1] == m.params[i - 1].values.size()) index[--i] = 0;
    if (i == 0) return false;
  }
  return false;
}

std::vector<ParamAssignment> DomainCorners(const CandidateManifest& m, const OperatorSpec& op) {
  std::vector<ParamAssignment> corners;
  ParamAssignment first;
  if (!FirstValidInstance(m, op, &first)) return corners;
  corners.push_back(first);
  auto add = [&](const ParamAssignment& a) {
    if (std::find(corners.begin(), corners.end(), a) == corners.end()) corners.push_back(a);
  };
  for (const ParamSpec& p : m.params) {
    if (p.values.size() < 2) continue;
    std::vector<int64_t> sorted = p.values;
    std::sort(sorted.begin(), sorted.end());
    // From the minimum upwards, then from the maximum downwards: the first value accepted.
    for (int side = 0; side < 2; ++side) {
      for (size_t k = 0; k < sorted.size(); ++k) {
        ParamAssignment a = first;
        a[p.name] = side == 0 ? sorted[k] : sorted[sorted.size() - 1 - k];
        if (!ValidUnderSomeConfig(m, op, a)) continue;
        add(a);
        break;
      }
    }
  }
  return corners;
}

}  // namespace forgek
