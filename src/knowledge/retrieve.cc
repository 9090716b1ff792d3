// Retrieval for agents: decisions ranked by how close their origin is (operator, category, arch) and
// their rendering as prompt text.
#include <algorithm>
#include <map>

#include "forgek/knowledge/knowledge.h"

namespace forgek {

bool RetrieveDecisions(Store& store, const RetrievalScope& scope, int limit, std::vector<RetrievedDecision>* out,
                       std::string* err) {
  out->clear();
  DecisionQuery q;
  q.arch = scope.arch;  // knowledge never crosses architectures
  std::vector<DecisionRecord> found;
  if (!store.ListDecisions(q, &found, err)) return false;
  auto in_regimes = [&](const std::string& regime) {
    return regime == "any" || scope.regimes.empty() ||
           std::find(scope.regimes.begin(), scope.regimes.end(), regime) != scope.regimes.end();
  };
  // 0: learned on this operator; 1: on another operator of its category; 2: on another category.
  auto level = [&](const DecisionRecord& d) {
    bool own = std::find(d.operators.begin(), d.operators.end(), scope.operator_name) != d.operators.end();
    if (d.scope.category == scope.category) return own || d.operators.empty() ? 0 : 1;
    return 2;
  };
  auto rank = [](DecisionVerdict v) {
    return v == DecisionVerdict::validated ? 0 : v == DecisionVerdict::hypothesis ? 1 : 2;
  };
  std::vector<const DecisionRecord*> kept;
  for (const DecisionRecord& d : found)
    if (in_regimes(d.scope.regime)) kept.push_back(&d);
  std::stable_sort(kept.begin(), kept.end(), [&](const DecisionRecord* a, const DecisionRecord* b) {
    if (level(*a) != level(*b)) return level(*a) < level(*b);
    if (rank(a->verdict) != rank(b->verdict)) return rank(a->verdict) < rank(b->verdict);
    if (a->comparisons != b->comparisons) return a->comparisons > b->comparisons;
    return a->confidence > b->confidence;
  });
  for (const DecisionRecord* d : kept) {
    if (limit > 0 && static_cast<int>(out->size()) >= limit) break;
    RetrievedDecision r{d->scope.mechanism, d->settings_json, d->verdict, d->effect, d->confidence, d->text};
    r.setting = d->scope.setting;
    r.regime = d->scope.regime;
    r.id = d->id;
    int l = level(*d);
    std::string from;
    for (const std::string& o : d->operators) from += (from.empty() ? "" : ", ") + o;
    r.transferred = l > 0;
    r.basis = l == 0 ? "same operator" : l == 1 ? "same category" : "same arch";
    if (r.transferred) {
      r.basis += " (learned on " + (from.empty() ? d->scope.category : from) + ")";
      r.text = "[transferred from " + (from.empty() ? d->scope.category : from) + ", unconfirmed here] " + r.text;
    }
    out->push_back(std::move(r));
  }
  return true;
}

std::string DescribeRetrieval(const std::vector<RetrievedDecision>& decisions) {
  std::map<std::string, int> by_basis;
  for (const auto& d : decisions) by_basis[d.transferred ? d.basis : "same operator"] += 1;
  std::string out;
  for (const auto& [basis, n] : by_basis) out += (out.empty() ? "" : "; ") + std::to_string(n) + " " + basis;
  return out.empty() ? "no decisions apply" : out;
}

std::string RenderDecisionsPrompt(const std::vector<RetrievedDecision>& decisions, const KnowledgeBase& kb) {
  std::string prefer, explore, avoid;
  for (const auto& d : decisions) {
    std::string line = "- " + d.text + "\n";
    if (const Mechanism* m = kb.FindMechanism(d.mechanism)) line += "  How: " + m->llm_words + "\n";
    // A setting validated on another operator is a prior to confirm here, not a fact.
    if (d.verdict == DecisionVerdict::validated && !d.transferred)
      prefer += line;
    else if (d.verdict == DecisionVerdict::refuted)
      avoid += "- " + d.text + "\n";
    else
      explore += line;
  }
  std::string out;
  if (!prefer.empty()) out += "Validated on this hardware (prefer these):\n" + prefer;
  if (!explore.empty())
    out += "Seen in expert kernels or learned on other operators, not yet validated here (worth trying):\n" + explore;
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
