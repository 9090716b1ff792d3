// Retrieval for agents: ranked decisions for (arch, category, regime) and their rendering as prompt text.
#include <algorithm>

#include "forgek/knowledge.h"

namespace forgek {

bool RetrieveDecisions(Store& store, const std::string& arch, const std::string& category, const std::string& regime,
                       int limit, std::vector<RetrievedDecision>* out, std::string* err) {
  out->clear();
  DecisionQuery q;
  q.arch = arch;
  q.category = category;
  q.regime = regime;
  std::vector<DecisionRecord> found;
  if (!store.ListDecisions(q, &found, err)) return false;
  // The store orders validated > hypothesis > refuted, then confidence and effect; an exact regime
  // beats "any" within the same verdict.
  std::stable_sort(found.begin(), found.end(), [&](const DecisionRecord& a, const DecisionRecord& b) {
    auto rank = [](const std::string& v) { return v == "validated" ? 0 : v == "hypothesis" ? 1 : 2; };
    if (rank(a.verdict) != rank(b.verdict)) return rank(a.verdict) < rank(b.verdict);
    bool ea = a.scope.regime == regime, eb = b.scope.regime == regime;
    if (ea != eb) return ea;
    return false;
  });
  for (const auto& d : found) {
    if (limit > 0 && static_cast<int>(out->size()) >= limit) break;
    out->push_back({d.scope.mechanism, d.settings_json, d.verdict, d.effect, d.confidence, d.text});
  }
  return true;
}

std::string RenderDecisionsPrompt(const std::vector<RetrievedDecision>& decisions, const KnowledgeBase& kb) {
  std::string prefer, explore, avoid;
  for (const auto& d : decisions) {
    std::string line = "- " + d.text + "\n";
    if (const Mechanism* m = kb.FindMechanism(d.mechanism)) line += "  How: " + m->llm_words + "\n";
    if (d.verdict == "validated")
      prefer += line;
    else if (d.verdict == "refuted")
      avoid += "- " + d.text + "\n";
    else
      explore += line;
  }
  std::string out;
  if (!prefer.empty()) out += "Validated on this hardware (prefer these):\n" + prefer;
  if (!explore.empty()) out += "Seen in expert kernels, not yet validated here (worth trying):\n" + explore;
  if (!avoid.empty()) out += "Measured to hurt here (avoid unless you change the reason):\n" + avoid;
  if (out.empty()) out = "No recorded knowledge for this operator category and architecture yet.\n";
  return out;
}

std::string RenderObservations(const std::vector<Observation>& obs) {
  std::string out;
  for (const auto& o : obs) {
    out += "- [" + o.kind + "] " + o.key + " = " + o.value;
    if (!o.mechanism.empty()) out += " (-> " + o.mechanism + ")";
    if (!o.evidence.empty()) out += ": " + o.evidence;
    out += "\n";
  }
  return out;
}

}  // namespace forgek
