// Statistics of timing samples and the rule that ends a timing loop; speed-of-light arithmetic.
#pragma once

#include <vector>

#include "forgek/core/evaluation.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek {

// The p-th percentile (0..100) of `values` by linear interpolation between order statistics;
// 0 for an empty list.
double Percentile(std::vector<double> values, double p);

// Median, mean, min, p10/p90 and relative noise ((p90 - p10) / 2 / median) of `us`, and the
// median of `clock_mhz` (empty: 0).
TimingStats Summarize(const std::vector<double>& us, const std::vector<double>& clock_mhz);

// The rounds of an interleaved timing paired: incumbent_us[i] / candidate_us[i] for every round
// both have, with their median and relative noise (PairedRatio).
PairedRatio PairRounds(const std::vector<double>& incumbent_us, const std::vector<double>& candidate_us);

// True when a timing loop that took `samples` samples over `elapsed_s` seconds with relative
// noise `rel_noise` should stop (see StopRule).
bool ShouldStop(const StopRule& rule, int samples, double elapsed_s, double rel_noise);

// Speed-of-light time in microseconds: max(flops / peak, bytes / bandwidth). A zero or missing
// peak leaves its term out; 0 when neither term applies.
double SolMicros(double flops, double bytes, double peak_tflops, double bandwidth_gbps);

// The bound of one config: its roofline time (SolMicros) or the device's launch floor
// (DevicePeaks::launch_floor_us), whichever is longer. A decode-sized config moves too few bytes
// for the roofline to bind, and no kernel is timed faster than an empty launch; 0 when neither is
// known.
double BoundMicros(double roofline_us, double launch_floor_us);

// A measured time this far below the speed-of-light bound cannot be real (clock and measurement
// slack included): the kernel skipped work or the measurement was fooled.
inline constexpr double kImpossibleFractionOfSol = 0.85;
bool FasterThanPossible(double median_us, double sol_us);

}  // namespace forgek
