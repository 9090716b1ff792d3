// Sampling, mutation and crossover inside one family's parameter domains.
#include "forgek/agent/family_space.h"

#include <algorithm>
#include <limits>

namespace forgek {
namespace {

constexpr int kMaxDraws = 512;           // rejection-sampling attempts before enumerating
constexpr uint64_t kEnumerateLimit = 4096;  // spaces up to this size are enumerated when draws fail

}  // namespace

FamilySpace::FamilySpace(const Candidate& family, const OperatorSpec& op, Coverage coverage)
    : family_(family), op_(op), coverage_(coverage) {}

bool FamilySpace::Valid(const ParamAssignment& params, std::string* why) const {
  for (const ParamSpec& p : family_.manifest.params) {
    auto it = params.find(p.name);
    if (it == params.end() || std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
      if (why) *why = "param " + p.name + " is missing or outside its domain";
      return false;
    }
  }
  std::string first_failure;
  for (const ConfigSpec& config : op_.configs) {
    std::string reason;
    const bool holds = ConstraintsHold(family_.manifest, params, config.values, NominalSmCount(family_.manifest), &reason);
    if (holds && coverage_ == Coverage::some_config) return true;
    if (!holds && first_failure.empty()) first_failure = "config " + config.name + ": " + reason;
    if (!holds && coverage_ == Coverage::every_config) break;
  }
  if (first_failure.empty()) return true;
  if (why) *why = coverage_ == Coverage::some_config ? "no config: " + first_failure : first_failure;
  return false;
}

uint64_t FamilySpace::Size() const {
  uint64_t size = 1;
  for (const ParamSpec& p : family_.manifest.params) {
    uint64_t n = p.values.size();
    if (n != 0 && size > std::numeric_limits<uint64_t>::max() / n) return std::numeric_limits<uint64_t>::max();
    size *= n;
  }
  return size;
}

ParamAssignment FamilySpace::Draw(Rng& rng) const {
  ParamAssignment a;
  for (const ParamSpec& p : family_.manifest.params) {
    std::uniform_int_distribution<size_t> pick(0, p.values.size() - 1);
    a[p.name] = p.values[pick(rng)];
  }
  return a;
}

bool FamilySpace::Sample(Rng& rng, ParamAssignment* out) const {
  for (int i = 0; i < kMaxDraws; ++i) {
    ParamAssignment a = Draw(rng);
    if (Valid(a)) {
      *out = std::move(a);
      return true;
    }
  }
  // Draws failed: a small space is enumerated so that a rare valid corner is still found.
  uint64_t size = Size();
  if (size > kEnumerateLimit) return false;
  std::vector<ParamAssignment> valid;
  for (uint64_t index = 0; index < size; ++index) {
    ParamAssignment a;
    uint64_t rest = index;
    for (const ParamSpec& p : family_.manifest.params) {
      a[p.name] = p.values[rest % p.values.size()];
      rest /= p.values.size();
    }
    if (Valid(a)) valid.push_back(std::move(a));
  }
  if (valid.empty()) return false;
  std::uniform_int_distribution<size_t> pick(0, valid.size() - 1);
  *out = valid[pick(rng)];
  return true;
}

bool FamilySpace::Mutate(const ParamAssignment& parent, Rng& rng, ParamAssignment* out) const {
  std::vector<const ParamSpec*> genes;
  for (const ParamSpec& p : family_.manifest.params)
    if (p.values.size() > 1) genes.push_back(&p);
  if (genes.empty()) return false;
  // The number of genes changed is geometric: one with probability 2/3, two with 2/9, three with
  // 2/27, ... Single steps keep a good parent's structure; the occasional multi-gene step leaves a
  // basin where two params only pay off together (a path switch that needs a matching size: one
  // change alone is slower, so single steps never cross).
  std::bernoulli_distribution one_more(1.0 / 3);
  // Domains list values in a meaningful order (sizes ascending), so a neighbour is a small step;
  // one gene change in eight jumps anywhere in its domain.
  std::bernoulli_distribution jump(1.0 / 8);
  std::vector<size_t> order(genes.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  for (int attempt = 0; attempt < 64; ++attempt) {
    ParamAssignment child = parent;
    size_t moves = 1;
    while (moves < genes.size() && one_more(rng)) ++moves;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t m = 0; m < moves; ++m) {
      const ParamSpec& gene = *genes[order[m]];
      auto pos = std::find(gene.values.begin(), gene.values.end(), child[gene.name]);
      size_t index = pos == gene.values.end() ? 0 : static_cast<size_t>(pos - gene.values.begin());
      if (jump(rng)) {
        std::uniform_int_distribution<size_t> any(0, gene.values.size() - 1);
        index = any(rng);
      } else if (index == 0) {
        index = 1;
      } else if (index + 1 == gene.values.size()) {
        index -= 1;
      } else {
        index = std::bernoulli_distribution(0.5)(rng) ? index + 1 : index - 1;
      }
      child[gene.name] = gene.values[index];
    }
    if (child != parent && Valid(child)) {
      *out = std::move(child);
      return true;
    }
  }
  return false;
}

bool FamilySpace::Crossover(const ParamAssignment& a, const ParamAssignment& b, Rng& rng,
                            ParamAssignment* out) const {
  for (int attempt = 0; attempt < 32; ++attempt) {
    ParamAssignment child;
    for (const ParamSpec& p : family_.manifest.params) {
      bool from_a = std::bernoulli_distribution(0.5)(rng);
      const ParamAssignment& src = from_a ? a : b;
      auto it = src.find(p.name);
      child[p.name] = it != src.end() ? it->second : p.values.front();
    }
    if (Valid(child)) {
      *out = std::move(child);
      return true;
    }
  }
  return false;
}

int FamilySpace::Apply(const ParamAssignment& settings, ParamAssignment* base) const {
  int applied = 0;
  for (const ParamSpec& p : family_.manifest.params) {
    auto it = settings.find(p.name);
    if (it == settings.end()) continue;
    if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) continue;
    (*base)[p.name] = it->second;
    ++applied;
  }
  return applied;
}

}  // namespace forgek
