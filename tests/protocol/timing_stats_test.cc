// Timing statistics, the stop rule and speed-of-light arithmetic.
#include "forgek/protocol/timing_stats.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

TEST(TimingStats, PercentilesInterpolate) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 5);
  EXPECT_DOUBLE_EQ(Percentile(v, 10), 1.4);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
}

TEST(TimingStats, SummarizeReportsMedianSpreadAndNoise) {
  std::vector<double> us;
  for (int i = 1; i <= 11; ++i) us.push_back(100 + i);  // 101..111
  TimingStats t = Summarize(us, {1980, 1755, 1980});
  EXPECT_EQ(t.samples, 11);
  EXPECT_DOUBLE_EQ(t.median_us, 106);
  EXPECT_DOUBLE_EQ(t.min_us, 101);
  EXPECT_DOUBLE_EQ(t.mean_us, 106);
  EXPECT_DOUBLE_EQ(t.p10_us, 102);
  EXPECT_DOUBLE_EQ(t.p90_us, 110);
  EXPECT_DOUBLE_EQ(t.rel_noise, (110.0 - 102.0) / 2 / 106);
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz, 1980);
  EXPECT_EQ(Summarize({}, {}).samples, 0);
}

TEST(TimingStats, OneOutlierMovesNeitherMedianNorNoiseMuch) {
  std::vector<double> us(50, 10.0);
  us.push_back(1000);
  TimingStats t = Summarize(us, {});
  EXPECT_DOUBLE_EQ(t.median_us, 10);
  EXPECT_DOUBLE_EQ(t.rel_noise, 0);
  EXPECT_GT(t.mean_us, 20);
}

// Both kernels 5 % slower in a slow round and 5 % faster in a fast one: each median is noisy, the
// ratio of every round is 1.02. Rounds one side lacks, or a zero time, are left out.
TEST(TimingStats, PairedRoundsCancelWhatTheRoundsShare) {
  std::vector<double> cand, inc;
  for (int i = 0; i < 40; ++i) {
    const double state = i % 3 == 0 ? 1.05 : i % 3 == 1 ? 0.95 : 1.0;
    cand.push_back(100 * state);
    inc.push_back(102 * state);
  }
  EXPECT_GT(Summarize(cand, {}).rel_noise, 0.04);
  PairedRatio p = PairRounds(inc, cand);
  EXPECT_EQ(p.pairs, 40);
  EXPECT_NEAR(p.median, 1.02, 1e-12);
  EXPECT_NEAR(p.rel_noise, 0, 1e-12);

  inc.push_back(50);  // a round the candidate never had
  cand[0] = 0;        // and one without a time
  p = PairRounds(inc, cand);
  EXPECT_EQ(p.pairs, 39);
  EXPECT_EQ(PairRounds({}, {}).pairs, 0);
  EXPECT_EQ(PairRounds({}, {}).median, 0);
}

TEST(TimingStats, StopRule) {
  StopRule r;
  r.min_samples = 10;
  r.max_samples = 100;
  r.min_time_s = 0.05;
  r.max_time_s = 1.0;
  r.max_noise = 0.02;
  EXPECT_FALSE(ShouldStop(r, 5, 0.5, 0.0));     // too few samples
  EXPECT_FALSE(ShouldStop(r, 20, 0.01, 0.0));   // too little time
  EXPECT_FALSE(ShouldStop(r, 20, 0.5, 0.05));   // too noisy
  EXPECT_TRUE(ShouldStop(r, 20, 0.5, 0.01));    // quiet enough
  EXPECT_TRUE(ShouldStop(r, 100, 0.5, 0.5));    // sample cap, however noisy
  EXPECT_TRUE(ShouldStop(r, 11, 1.0, 0.5));     // time cap, however noisy
}

TEST(TimingStats, SpeedOfLight) {
  // 8192^3 bf16 GEMM at 760 TFLOP/s: compute-bound, 1.4467 ms.
  double flops = 2.0 * 8192 * 8192 * 8192;
  double bytes = 3.0 * 2 * 8192 * 8192;
  EXPECT_NEAR(SolMicros(flops, bytes, 760, 4000), flops / 760e12 * 1e6, 1e-6);
  // A 1 GiB copy (read + write) at 4000 GB/s: memory-bound.
  EXPECT_NEAR(SolMicros(0, 2.0 * (1 << 30), 760, 4000), 2.0 * (1 << 30) / 4000e9 * 1e6, 1e-6);
  EXPECT_DOUBLE_EQ(SolMicros(flops, bytes, 0, 0), 0);  // no peaks: no bound
  EXPECT_NEAR(SolMicros(flops, 0, 0, 4000), 0, 1e-12);
}

TEST(TimingStats, TheBoundIsTheRooflineOrTheLaunchFloorWhicheverIsLonger) {
  // rope decode_64x32x128 moves ~1.1 MB: 0.26 us at 4250 GB/s, under a 2 us launch floor.
  const double decode_roofline = SolMicros(0, 4.0 * 64 * 32 * 128 + 4 * 64 + 4 * 64 * 128, 0, 4250);
  EXPECT_DOUBLE_EQ(BoundMicros(decode_roofline, 2.0), 2.0);
  EXPECT_DOUBLE_EQ(BoundMicros(300.0, 2.0), 300.0);     // a large config: the roofline binds
  EXPECT_DOUBLE_EQ(BoundMicros(decode_roofline, 0), decode_roofline);  // floor unknown
  EXPECT_DOUBLE_EQ(BoundMicros(0, 0), 0);
}

TEST(TimingStats, FasterThanPossible) {
  EXPECT_TRUE(FasterThanPossible(50, 100));
  EXPECT_FALSE(FasterThanPossible(90, 100));   // within measurement slack
  EXPECT_FALSE(FasterThanPossible(150, 100));
  EXPECT_FALSE(FasterThanPossible(1, 0));      // no bound known
}

}  // namespace
}  // namespace forgek
