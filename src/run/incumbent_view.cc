// A dispatch incumbent as an agent sees it: the kernel serving each config, with its source.
#include "incumbent_view.h"

#include <map>

namespace forgek {
namespace {

std::string KernelWords(const std::string& family, const ParamAssignment& params) {
  std::string text = family.empty() ? "free-form kernel" : "family " + family;
  std::string list;
  for (const auto& [name, value] : params) list += (list.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return list.empty() ? text : text + " with " + list;
}

}  // namespace

bool DescribeDispatchIncumbent(const Incumbent& inc, const Incumbent& expert, const std::vector<std::string>& configs,
                               Store* store, std::vector<IncumbentServer>* out, std::string* err) {
  out->clear();
  if (inc.per_config.empty() && inc.reference_configs.empty()) return true;
  std::map<std::string, std::string> sources;  // candidate hash -> source, read once
  for (const std::string& config : configs) {
    IncumbentServer s;
    s.config = config;
    auto it = inc.per_config.find(config);
    if (inc.reference_configs.count(config)) {
      s.kernel = expert.label;
      if (expert.has_source) s.source = expert.source.source;
    } else if (it != inc.per_config.end() && !it->second.candidate_hash.empty()) {
      const DispatchKernel& k = it->second;
      s.kernel = KernelWords(k.family, k.kernel.params) + ", from " + inc.label;
      auto known = sources.find(k.candidate_hash);
      if (known == sources.end()) {
        CandidateRecord cand;
        bool found = false;
        if (store && !store->GetCandidate(k.candidate_hash, &cand, &found, err)) return false;
        known = sources.emplace(k.candidate_hash, found ? cand.source : "").first;
      }
      s.source = known->second;
    } else {
      // Outside the table: the seal's own kernel serves it.
      std::string params;
      for (const auto& [name, value] : inc.kernel.params)
        params += (params.empty() ? " with " : ", ") + name + "=" + std::to_string(value);
      s.kernel = "the own kernel of " + inc.label + params;
      if (inc.has_source) s.source = inc.source.source;
    }
    out->push_back(std::move(s));
  }
  return true;
}

}  // namespace forgek
