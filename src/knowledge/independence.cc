// Counting each measurement once per decision.
//
// The run loop compares each timed attempt with every earlier attempt of its family that differs
// from it in one control group only (RunState::Learn), so one attempt's timing can stand in several
// comparisons of one decision: a lucky timing of `stages=4` compared with `stages=2`, `3` and `5`
// is three comparisons resting on one measurement. Counted as three independent ones they would
// divide the decision's noise by three and give it confidence 3/4, and the luck would read as a
// verdict. A decision counts instead a largest set of its comparisons that share no attempt: a
// maximum matching of the bipartite graph whose sides are this setting's attempts and the other
// settings' attempts (each comparison is an edge between its two attempts).
#include "independence.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"

namespace forgek {

namespace {

// The two measurements a search comparison rests on: its attempts, this setting's first. A side
// without an attempt id (an evidence row written without one) is a measurement no other row shares.
std::pair<std::string, std::string> Sides(const EvidenceRecord& e, size_t index) {
  const std::string own = std::string("\x1f") + std::to_string(index);  // no attempt id holds a unit separator
  std::pair<std::string, std::string> sides{own + "a", own + "b"};
  nlohmann::json detail = ParseJsonLenient(e.detail_json.empty() ? "{}" : e.detail_json);
  if (!detail.is_object()) return sides;
  auto it = detail.find("attempts");
  if (it == detail.end() || !it->is_array()) return sides;
  if (it->size() > 0 && (*it)[0].is_string() && !(*it)[0].get<std::string>().empty())
    sides.first = (*it)[0].get<std::string>();
  if (it->size() > 1 && (*it)[1].is_string() && !(*it)[1].get<std::string>().empty())
    sides.second = (*it)[1].get<std::string>();
  return sides;
}

// A maximum matching by Hopcroft and Karp: O(E sqrt(V)), and without recursion, so that an import
// holding a hostile number of comparisons on one decision costs bounded time and no stack. The
// graph is given as, per left vertex, its (right vertex, evidence index) edges in recording order.
class Matching {
 public:
  using Edges = std::vector<std::vector<std::pair<size_t, size_t>>>;
  Matching(const Edges& edges, size_t rights)
      : edges_(edges),
        left_edge_(edges.size(), kNone),
        right_left_(rights, kNone),
        dist_(edges.size()),
        next_(edges.size()) {}

  // The evidence index of each matched pair.
  std::vector<size_t> Solve() {
    while (Layer()) {
      std::fill(next_.begin(), next_.end(), 0);
      for (size_t left = 0; left < edges_.size(); ++left)
        if (left_edge_[left] == kNone && dist_[left] == 0) Augment(left);
    }
    std::vector<size_t> chosen;
    for (size_t e : left_edge_)
      if (e != kNone) chosen.push_back(e);
    return chosen;
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // Breadth-first layers from the unmatched left vertices, up to the first layer that reaches an
  // unmatched right vertex (shortest_); false when none does: the matching is maximum.
  bool Layer() {
    std::vector<size_t> queue;
    for (size_t left = 0; left < edges_.size(); ++left) {
      dist_[left] = left_edge_[left] == kNone ? 0 : kNone;
      if (dist_[left] == 0) queue.push_back(left);
    }
    shortest_ = kNone;
    for (size_t at = 0; at < queue.size(); ++at) {
      const size_t left = queue[at];
      if (dist_[left] > shortest_) break;  // the queue is in layer order
      for (const auto& [right, evidence] : edges_[left]) {
        const size_t mate = right_left_[right];
        if (mate == kNone) {
          shortest_ = std::min(shortest_, dist_[left]);
        } else if (dist_[mate] == kNone) {
          dist_[mate] = dist_[left] + 1;
          queue.push_back(mate);
        }
      }
    }
    return shortest_ != kNone;
  }

  // One augmenting path from `root` along the layers, by an explicit stack; each left vertex's
  // next_ is the edge it tries (kept across the phase, as dead ends stay dead within it).
  void Augment(size_t root) {
    std::vector<size_t> path = {root};
    while (!path.empty()) {
      const size_t left = path.back();
      if (next_[left] == edges_[left].size()) {
        dist_[left] = kNone;  // a dead end for the rest of the phase
        path.pop_back();
        continue;
      }
      const size_t right = edges_[left][next_[left]].first;
      const size_t mate = right_left_[right];
      if (mate == kNone && dist_[left] == shortest_) {
        // Flip the path: every left vertex on it takes the edge it is trying.
        for (size_t l : path) {
          const auto& [r, evidence] = edges_[l][next_[l]];
          right_left_[r] = l;
          left_edge_[l] = evidence;
        }
        return;
      }
      if (mate != kNone && dist_[mate] != kNone && dist_[mate] == dist_[left] + 1 && dist_[mate] <= shortest_) {
        path.push_back(mate);
        continue;
      }
      ++next_[left];
    }
  }

  const Edges& edges_;
  std::vector<size_t> left_edge_, right_left_, dist_, next_;
  size_t shortest_ = kNone;
};

}  // namespace

std::vector<size_t> IndependentComparisons(const std::vector<EvidenceRecord>& evidence) {
  std::vector<size_t> chosen, search;
  for (size_t i = 0; i < evidence.size(); ++i) {
    const EvidenceRecord& e = evidence[i];
    if (e.speedup <= 0) continue;
    // An ablation times the best and its variant afresh, interleaved in one evaluation: nothing
    // of it is shared with another row.
    if (e.kind == "ablation") chosen.push_back(i);
    if (e.kind == "comparison") search.push_back(i);
  }
  // Recording order decides between equally large sets, so the choice never looks at a result.
  std::sort(search.begin(), search.end(), [&](size_t a, size_t b) {
    const EvidenceRecord &x = evidence[a], &y = evidence[b];
    return std::tie(x.created_at, x.id, a) < std::tie(y.created_at, y.id, b);
  });
  std::map<std::string, size_t> lefts, rights;
  std::vector<std::vector<std::pair<size_t, size_t>>> edges;
  for (size_t i : search) {
    auto [left, right] = Sides(evidence[i], i);
    auto l = lefts.emplace(left, lefts.size()).first->second;
    auto r = rights.emplace(right, rights.size()).first->second;
    if (l == edges.size()) edges.emplace_back();
    edges[l].push_back({r, i});
  }
  std::vector<size_t> matched = Matching(edges, rights.size()).Solve();
  chosen.insert(chosen.end(), matched.begin(), matched.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace forgek
