// Ablation variants: one controlled param of the best moved to a neighbouring value.
#include "ablation.h"

#include <algorithm>

#include "forgek/agent/family_space.h"

namespace forgek {

std::vector<ParamAssignment> AblationVariants(const Candidate& family, const OperatorSpec& op,
                                              const ParamAssignment& best, int max) {
  FamilySpace space(family, op);
  // Per control group, its candidate variants in order of preference.
  std::vector<std::vector<ParamAssignment>> per_group;
  for (const ControlSpec& c : family.manifest.controls) {
    std::vector<ParamAssignment> options;
    for (const std::string& name : c.params) {
      auto spec = std::find_if(family.manifest.params.begin(), family.manifest.params.end(),
                               [&](const ParamSpec& p) { return p.name == name; });
      auto at = best.find(name);
      if (spec == family.manifest.params.end() || at == best.end() || spec->values.size() < 2) continue;
      auto pos = std::find(spec->values.begin(), spec->values.end(), at->second);
      if (pos == spec->values.end()) continue;
      std::vector<int64_t> neighbours;
      if (pos != spec->values.begin()) neighbours.push_back(*(pos - 1));
      if (pos + 1 != spec->values.end()) neighbours.push_back(*(pos + 1));
      for (int64_t v : neighbours) {
        ParamAssignment variant = best;
        variant[name] = v;
        if (space.Valid(variant)) options.push_back(std::move(variant));
      }
    }
    if (!options.empty()) per_group.push_back(std::move(options));
  }
  std::vector<ParamAssignment> out;
  for (size_t round = 0; static_cast<int>(out.size()) < max; ++round) {
    bool any = false;
    for (const auto& options : per_group) {
      if (round >= options.size() || static_cast<int>(out.size()) >= max) continue;
      out.push_back(options[round]);
      any = true;
    }
    if (!any) break;
  }
  return out;
}

}  // namespace forgek
