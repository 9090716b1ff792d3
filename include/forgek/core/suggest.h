// "Did you mean" hints: close matches of a misspelt name by edit distance.
#pragma once

#include <string>
#include <vector>

namespace forgek {

// Levenshtein distance (insertions, deletions, substitutions), case-sensitive.
size_t EditDistance(const std::string& a, const std::string& b);

// The known names within a small distance of `word` (about a third of its length; none for one letter),
// closest first, at most `limit`.
std::vector<std::string> CloseMatches(const std::string& word, const std::vector<std::string>& known,
                                      size_t limit = 3);

// " (did you mean 'x'?)" or " (did you mean 'x' or 'y'?)", or "" when nothing is close.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& known);

}  // namespace forgek
