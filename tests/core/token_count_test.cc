// Token counts from outside: sums stop at INT64_MAX instead of wrapping below a budget.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "forgek/core/token_count.h"

namespace forgek {
namespace {

TEST(TokenCount, SaturatingAddNeverWrapsBelowABudget) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SaturatingAdd(2, 3), 5);
  EXPECT_EQ(SaturatingAdd(kMax, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 5), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 5, 5), kMax);
  EXPECT_EQ(SaturatingAdd(0, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(-7, 3), 3) << "a negative count counts as none";
  // Seven replies of the largest accepted count stay exact and far below the maximum.
  int64_t total = 0;
  for (int i = 0; i < 7; ++i) total = SaturatingAdd(total, kMaxTokenCount);
  EXPECT_EQ(total, 7 * kMaxTokenCount);
}

}  // namespace
}  // namespace forgek
