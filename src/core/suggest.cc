// Close-match suggestions for unknown names.
#include "forgek/core/suggest.h"

#include <algorithm>

namespace forgek {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> CloseMatches(const std::string& word, const std::vector<std::string>& known,
                                      size_t limit) {
  // A one-letter name is one edit from every other one-letter name: no hint then.
  size_t max_distance = word.size() < 2 ? 0 : (word.size() + 2) / 3;
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& k : known) {
    if (k == word) continue;
    size_t d = EditDistance(word, k);
    if (d <= max_distance) scored.emplace_back(d, k);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, k] : scored) {
    if (out.size() == limit) break;
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& known) {
  std::vector<std::string> close = CloseMatches(word, known, 2);
  if (close.empty()) return "";
  std::string out = " (did you mean '" + close[0] + "'";
  if (close.size() > 1) out += " or '" + close[1] + "'";
  return out + "?)";
}

}  // namespace forgek
