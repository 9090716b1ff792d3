// Token counts that come from outside (a provider's usage, an imported exchange): a bound, and sums that cannot overflow.
#pragma once

#include <cstdint>
#include <limits>

namespace forgek {

// The largest token count forgek accepts from a provider's usage or an import: 2^40 (about 10^12)
// is far above any real request, and far enough below INT64_MAX that sums of many stay exact.
inline constexpr int64_t kMaxTokenCount = int64_t{1} << 40;

// a + b for counts >= 0, stopping at INT64_MAX instead of wrapping: a budget compared against the
// sum can never be passed by numbers large enough to wrap it.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (a < 0) a = 0;
  if (b < 0) b = 0;
  return a > kMax - b ? kMax : a + b;
}

}  // namespace forgek
