// The one rule for measured times: noise, geomean, faster/same/slower, the sealing rule and seal
// verification. Every command that compares kernels decides through this header (docs/seal-format.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "forgek/core/evaluation.h"

namespace forgek {

// How a variant's time compares with a base's on one measurement.
enum class Direction { faster, same, slower };
const char* DirectionName(Direction d);

// The relative noise of a ratio of two medians, each with its own relative noise: they add in
// quadrature (root-sum-square), the usual propagation for independent errors of a quotient.
double RatioNoise(double rel_noise_a, double rel_noise_b);

// `variant` against `base` on one config.
struct TimeComparison {
  std::string config;
  double speedup = 0;  // base median / variant median: > 1 means the variant is faster
  double noise = 0;    // relative noise of that speedup (RatioNoise of the two medians, or the
                       // spread of the paired rounds: CompareConfig)
  Direction direction = Direction::same;
  bool timed = false;  // false when either median is missing (then direction is `same`)
};

// The rule: faster when speedup > 1 + max(noise, min_effect), slower when speedup <
// 1 - max(noise, min_effect), else the same. `min_effect` is a floor under the noise for callers
// that must not act on tiny differences (the sealing rule's minimum gain).
Direction Classify(double speedup, double noise, double min_effect = 0);
TimeComparison CompareTimes(const TimingStats& base, const TimingStats& variant, double min_effect = 0);
// A config result's candidate against its incumbent. When the two were timed in at least
// kMinPairedRounds alternating rounds (ConfigResult::paired), the speedup's noise is the spread of
// the per-round ratios instead of the two medians' noises added as if independent.
inline constexpr int kMinPairedRounds = 10;
TimeComparison CompareConfig(const ConfigResult& c, double min_effect = 0);

// The geometric mean of positive speedups (0 for an empty list or a non-positive member). The one
// geomean of forgek: every other mean of ratios or percentages goes through it.
double Geomean(const std::vector<double>& speedups);
// The geometric mean of the positive members of `values`, the others left out (a config without a
// speed-of-light figure records 0); 0 when none is positive, as Geomean gives for an empty list.
// 0 means "no mean": a caller with another word for unknown (budget's -1) maps it.
double GeomeanOfPositive(const std::vector<double>& values);

// A candidate against its incumbent over several configs. The geomean is the mean of the configs'
// log speedups, so its noise is theirs propagated: sqrt(sum of squares) / n.
struct GeomeanComparison {
  std::vector<TimeComparison> configs;
  double speedup = 0;  // geomean over timed configs
  double noise = 0;    // propagated noise of the geomean
  Direction geomean_direction = Direction::same;
  int faster_configs = 0, slower_configs = 0;
  // The verdict: slower when any config is slower beyond its noise or the geomean is; faster when
  // the geomean is faster beyond its noise and no config is slower; else the same.
  Direction direction = Direction::same;
  std::string Summary() const;  // "geomean 1.031x (noise 0.6%) over 3 configs; slower on A 0.970x"
};
GeomeanComparison CompareOnConfigs(const std::vector<ConfigResult>& configs, double min_effect = 0);

// The outcome of an evaluation that was correct and timed against an incumbent.
Outcome TimedOutcome(Direction d);

// How an evaluator ends an evaluation that was correct and timed against an incumbent on each of
// `result->configs`: the geomean speedup, the outcome (faster | same | slower) and the summary line
// (GeomeanComparison::Summary) from CompareOnConfigs. The worker evaluator and every stand-in for
// it end this way, so the search's outcome is the one the sealing rule and verification read.
void JudgeTimed(EvalResult* result);

// ---- Sealing ----

// The sealing rule: correct on every one of the operator's configs, no config slower beyond its
// noise, and the geomean faster beyond its propagated noise and by at least `min_gain`.
struct SealVerdict {
  bool seal = false;
  std::string reason;
  GeomeanComparison comparison;
};
SealVerdict DecideSeal(const EvalResult& confirmation, size_t operator_configs, double min_gain);

// ---- Verification ----

// A seal re-measured now, interleaved against the expert reference in one process. It holds when
// it is correct on every config and, under the same rule, slower than the reference on none.
// `sealed_us` (per config, from the seal) is reported as drift only: times from another process
// and another day carry clock states the interleaved comparison does not.
struct VerifyConfig {
  std::string config;
  bool correct = false;
  double now_us = 0, sealed_us = 0, expert_us = 0;
  TimeComparison vs_expert;  // the seal (variant) against the expert reference (base)
  double drift = 0;          // now / sealed - 1 (0 when no sealed time)
};
struct VerifyVerdict {
  bool holds = false;
  std::string reason;
  std::vector<VerifyConfig> configs;
};
VerifyVerdict DecideVerify(const EvalResult& now, size_t operator_configs,
                           const std::vector<std::pair<std::string, double>>& sealed_us);

}  // namespace forgek
