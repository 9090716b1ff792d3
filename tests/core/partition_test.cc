// Tests of the partition generator behind the `partition` init: exact sums, bounds, unevenness.
#include "forgek/core/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace forgek {
namespace {

TEST(Partition, SumsToTotalWithBoundedMultiplesForManySeeds) {
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::vector<int64_t> parts;
    std::string err;
    ASSERT_TRUE(MakePartition(16384, 8, 8, 256, seed * 7919 + 1, &parts, &err)) << err;
    ASSERT_EQ(parts.size(), 8u);
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), int64_t{0}), 16384) << "seed " << seed;
    for (int64_t p : parts) {
      EXPECT_EQ(p % 8, 0) << "seed " << seed;
      EXPECT_GE(p, 256) << "seed " << seed;
    }
    // Uneven: a flat Dirichlet over 8 parts puts the largest well above the smallest.
    auto [lo, hi] = std::minmax_element(parts.begin(), parts.end());
    EXPECT_GE(*hi, 2 * *lo) << "seed " << seed;
    seen.insert(parts);
  }
  EXPECT_EQ(seen.size(), 50u) << "every seed gives its own split";
}

TEST(Partition, SameSeedSamePartition) {
  std::vector<int64_t> a, b;
  std::string err;
  ASSERT_TRUE(MakePartition(1000, 13, 1, 0, 42, &a, &err)) << err;
  ASSERT_TRUE(MakePartition(1000, 13, 1, 0, 42, &b, &err)) << err;
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::accumulate(a.begin(), a.end(), int64_t{0}), 1000);
}

TEST(Partition, TightAndDegenerateTotals) {
  std::vector<int64_t> parts;
  std::string err;
  ASSERT_TRUE(MakePartition(64, 8, 8, 8, 3, &parts, &err)) << err;  // no room above the minimum
  EXPECT_EQ(parts, std::vector<int64_t>(8, 8));
  ASSERT_TRUE(MakePartition(0, 4, 1, 0, 3, &parts, &err)) << err;
  EXPECT_EQ(parts, std::vector<int64_t>(4, 0));
  ASSERT_TRUE(MakePartition(5, 1, 1, 0, 3, &parts, &err)) << err;
  EXPECT_EQ(parts, std::vector<int64_t>{5});
}

TEST(Partition, ImpossibleRequestsSayWhy) {
  std::vector<int64_t> parts;
  std::string err;
  EXPECT_FALSE(MakePartition(100, 8, 8, 0, 1, &parts, &err));
  EXPECT_EQ(err, "partition: total 100 is not a multiple of 8");
  EXPECT_FALSE(MakePartition(64, 8, 8, 16, 1, &parts, &err));
  EXPECT_EQ(err, "partition: 8 parts of at least 16 exceed total 64");
  EXPECT_FALSE(MakePartition(64, 0, 8, 0, 1, &parts, &err));
  EXPECT_EQ(err, "partition: needs at least one element to partition");
  EXPECT_EQ(PartitionProblem(64, 8, 0, 0), "multiple must be at least 1, got 0");
  EXPECT_EQ(PartitionProblem(-8, 8, 8, 0), "total must be non-negative, got -8");
  EXPECT_EQ(PartitionProblem(64, 8, 8, 8), "");
}

}  // namespace
}  // namespace forgek
