// The pass/fail decision for exact outputs under tolerance.max_mismatch_fraction (pure, no GPU).
#include <gtest/gtest.h>

#include "worker/config_buffers.h"

namespace forgek::worker {
namespace {

TEST(MismatchFraction, AllowedIsTheFloorOfFractionTimesElements) {
  EXPECT_EQ(AllowedMismatches(128, 0.02), 2);  // 2.56
  EXPECT_EQ(AllowedMismatches(100, 0.25), 25);
  EXPECT_EQ(AllowedMismatches(49, 0.02), 0);   // 0.98
  EXPECT_EQ(AllowedMismatches(1000, 0), 0);
  EXPECT_EQ(AllowedMismatches(0, 0.4), 0);
}

TEST(MismatchFraction, PassesUpToTheAllowanceAndFailsBeyond) {
  EXPECT_TRUE(ExactMismatchesPass(0, 0, 0, 128, 0.02));
  EXPECT_TRUE(ExactMismatchesPass(2, 0, 0, 128, 0.02));
  EXPECT_FALSE(ExactMismatchesPass(3, 0, 0, 128, 0.02));
}

TEST(MismatchFraction, ZeroFractionMeansEveryElementMustMatch) {
  EXPECT_TRUE(ExactMismatchesPass(0, 0, 0, 1 << 20, 0));
  EXPECT_FALSE(ExactMismatchesPass(1, 0, 0, 1 << 20, 0));
}

TEST(MismatchFraction, NonFiniteOrUnwrittenElementsNeverPass) {
  EXPECT_FALSE(ExactMismatchesPass(1, 1, 0, 1000, 0.1));
  EXPECT_FALSE(ExactMismatchesPass(1, 0, 1, 1000, 0.1));
}

}  // namespace
}  // namespace forgek::worker
