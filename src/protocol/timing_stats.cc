// Timing statistics, the stop rule and speed-of-light arithmetic.
#include "forgek/protocol/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace forgek {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

TimingStats Summarize(const std::vector<double>& us, const std::vector<double>& clock_mhz) {
  TimingStats t;
  t.samples = static_cast<int>(us.size());
  if (us.empty()) return t;
  t.median_us = Percentile(us, 50);
  t.p10_us = Percentile(us, 10);
  t.p90_us = Percentile(us, 90);
  t.min_us = *std::min_element(us.begin(), us.end());
  t.mean_us = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
  t.rel_noise = t.median_us > 0 ? (t.p90_us - t.p10_us) / 2 / t.median_us : 0;
  t.sm_clock_mhz = Percentile(clock_mhz, 50);
  return t;
}

PairedRatio PairRounds(const std::vector<double>& incumbent_us, const std::vector<double>& candidate_us) {
  std::vector<double> ratios;
  const size_t rounds = std::min(incumbent_us.size(), candidate_us.size());
  for (size_t i = 0; i < rounds; ++i)
    if (incumbent_us[i] > 0 && candidate_us[i] > 0) ratios.push_back(incumbent_us[i] / candidate_us[i]);
  PairedRatio p;
  p.pairs = static_cast<int>(ratios.size());
  if (ratios.empty()) return p;
  p.median = Percentile(ratios, 50);
  p.rel_noise = (Percentile(ratios, 90) - Percentile(ratios, 10)) / 2 / p.median;
  return p;
}

bool ShouldStop(const StopRule& rule, int samples, double elapsed_s, double rel_noise) {
  if (samples >= rule.max_samples || elapsed_s >= rule.max_time_s) return true;
  if (samples < rule.min_samples || elapsed_s < rule.min_time_s) return false;
  return rel_noise <= rule.max_noise;
}

double SolMicros(double flops, double bytes, double peak_tflops, double bandwidth_gbps) {
  double compute_us = peak_tflops > 0 ? flops / (peak_tflops * 1e12) * 1e6 : 0;
  double memory_us = bandwidth_gbps > 0 ? bytes / (bandwidth_gbps * 1e9) * 1e6 : 0;
  return std::max(compute_us, memory_us);
}

double BoundMicros(double roofline_us, double launch_floor_us) {
  return std::max(std::max(roofline_us, 0.0), std::max(launch_floor_us, 0.0));
}

bool FasterThanPossible(double median_us, double sol_us) {
  return sol_us > 0 && median_us > 0 && median_us < kImpossibleFractionOfSol * sol_us;
}

}  // namespace forgek
