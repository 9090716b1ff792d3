// The sealing rule: what makes a candidate good enough to become the next run's incumbent.
#include <cmath>
#include <cstdio>

#include "forgek/run.h"

namespace forgek {
namespace {

// The spread of a speedup measured from two medians with their own relative noise.
double CombinedNoise(const ConfigResult& c) {
  return std::sqrt(c.candidate.rel_noise * c.candidate.rel_noise + c.incumbent.rel_noise * c.incumbent.rel_noise);
}

std::string Fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

}  // namespace

SealVerdict DecideSeal(const EvalResult& confirmation, size_t operator_configs, double min_gain) {
  if (confirmation.outcome != Outcome::faster && confirmation.outcome != Outcome::slower)
    return {false, std::string("confirmation ended ") + OutcomeName(confirmation.outcome) + ": " + confirmation.detail};
  if (confirmation.configs.size() != operator_configs)
    return {false, "confirmed on " + std::to_string(confirmation.configs.size()) + " of " +
                       std::to_string(operator_configs) + " configs; a seal must serve every config"};
  // The geomean is the mean of the configs' log speedups, so its noise is theirs propagated:
  // sqrt(sum of squares) / n. (The worst single config's noise, used before, let one noisy config
  // veto any seal however precisely the others were measured; each config still may not regress
  // beyond its own noise.)
  double log_sum = 0, noise_sq_sum = 0;
  for (const ConfigResult& c : confirmation.configs) {
    if (!c.correctness.ok) return {false, "config " + c.config + " is not correct: " + c.correctness.detail};
    if (c.candidate.median_us <= 0 || c.incumbent.median_us <= 0)
      return {false, "config " + c.config + " has no timing"};
    double speedup = c.incumbent.median_us / c.candidate.median_us;
    double noise = CombinedNoise(c);
    noise_sq_sum += noise * noise;
    if (speedup < 1.0 - noise)
      return {false, "config " + c.config + " regresses: " +
                         Fmt("%.3fx, beyond its noise of %.1f%%", speedup, 100 * noise)};
    log_sum += std::log(speedup);
  }
  const double n = static_cast<double>(confirmation.configs.size());
  double geomean = std::exp(log_sum / n);
  double geomean_noise = std::sqrt(noise_sq_sum) / n;
  double needed = 1.0 + std::max(min_gain, geomean_noise);
  if (geomean < needed)
    return {false, Fmt("geomean speedup %.3fx is within its noise of %.1f%% or under the minimum gain (needs %.3fx)",
                       geomean, 100 * geomean_noise, needed)};
  return {true, Fmt("geomean speedup %.3fx over the incumbent (needed %.3fx), correct on every config", geomean,
                    needed)};
}

int RunSummary::AttemptsToReach(double speedup) const {
  for (size_t i = 0; i < best_so_far.size(); ++i)
    if (best_so_far[i] >= speedup) return static_cast<int>(i) + 1;
  return -1;
}

}  // namespace forgek
