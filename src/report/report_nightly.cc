// The nightly history (`forgek regress` rows of the store) grouped per seal, oldest check first.
#include <algorithm>

#include "report_build.h"

namespace forgek::report_build {

std::vector<SealHistory> NightlyOf(const Scope& scope) {
  std::vector<SealHistory> out;
  for (const SealCheckRecord& c : scope.checks) {
    // A row about no seal (an operator without one) has nothing to plot against: it is kept under
    // its operator's name so that the table still shows it.
    auto h = std::find_if(out.begin(), out.end(), [&](const SealHistory& x) {
      return x.seal_id == c.seal_id && x.op == c.operator_name;
    });
    if (h == out.end()) {
      out.push_back({c.seal_id, c.operator_name, {}});
      h = out.end() - 1;
    }
    h->checks.push_back(c);
  }
  return out;
}

}  // namespace forgek::report_build
