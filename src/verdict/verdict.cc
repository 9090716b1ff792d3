// The one rule for measured times (docs/seal-format.md, "The rule"): every comparison of a
// candidate with an incumbent, the sealing decision and seal verification are made here.
#include "forgek/verdict/verdict.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace forgek {

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::faster: return "faster";
    case Direction::slower: return "slower";
    case Direction::same: break;
  }
  return "same";
}

double RatioNoise(double rel_noise_a, double rel_noise_b) {
  return std::sqrt(rel_noise_a * rel_noise_a + rel_noise_b * rel_noise_b);
}

Direction Classify(double speedup, double noise, double min_effect) {
  const double band = std::max(noise, min_effect);
  if (speedup > 1.0 + band) return Direction::faster;
  if (speedup < 1.0 - band) return Direction::slower;
  return Direction::same;
}

TimeComparison CompareTimes(const TimingStats& base, const TimingStats& variant, double min_effect) {
  TimeComparison t;
  if (base.median_us <= 0 || variant.median_us <= 0) return t;
  t.timed = true;
  t.speedup = base.median_us / variant.median_us;
  t.noise = RatioNoise(base.rel_noise, variant.rel_noise);
  t.direction = Classify(t.speedup, t.noise, min_effect);
  return t;
}

TimeComparison CompareConfig(const ConfigResult& c, double min_effect) {
  TimeComparison t = CompareTimes(c.incumbent, c.candidate, min_effect);
  t.config = c.config;
  // Timed together in alternating rounds, the two share each round's clock and power state: the
  // spread of the per-round ratios is the speedup's own noise (a card drifting under its power
  // limit moves both medians, not their ratio).
  if (t.timed && c.paired.pairs >= kMinPairedRounds) {
    t.noise = c.paired.rel_noise;
    t.direction = Classify(t.speedup, t.noise, min_effect);
  }
  return t;
}

double Geomean(const std::vector<double>& speedups) {
  if (speedups.empty()) return 0;
  double log_sum = 0;
  for (double s : speedups) {
    if (!(s > 0)) return 0;
    log_sum += std::log(s);
  }
  return std::exp(log_sum / static_cast<double>(speedups.size()));
}

double GeomeanOfPositive(const std::vector<double>& values) {
  std::vector<double> positive;
  for (double v : values)
    if (v > 0) positive.push_back(v);
  return Geomean(positive);
}

GeomeanComparison CompareOnConfigs(const std::vector<ConfigResult>& configs, double min_effect) {
  GeomeanComparison g;
  std::vector<double> speedups;
  double noise_sq_sum = 0;
  for (const ConfigResult& c : configs) {
    TimeComparison t = CompareConfig(c);  // each config is judged by its noise alone
    if (t.timed) {
      speedups.push_back(t.speedup);
      noise_sq_sum += t.noise * t.noise;
      if (t.direction == Direction::faster) ++g.faster_configs;
      if (t.direction == Direction::slower) ++g.slower_configs;
    }
    g.configs.push_back(std::move(t));
  }
  if (speedups.empty()) return g;
  const double n = static_cast<double>(speedups.size());
  g.speedup = Geomean(speedups);
  g.noise = std::sqrt(noise_sq_sum) / n;
  g.geomean_direction = Classify(g.speedup, g.noise, min_effect);
  if (g.slower_configs > 0 || g.geomean_direction == Direction::slower)
    g.direction = Direction::slower;
  else if (g.geomean_direction == Direction::faster)
    g.direction = Direction::faster;
  else
    g.direction = Direction::same;
  return g;
}

std::string GeomeanComparison::Summary() const {
  int timed = 0;
  for (const TimeComparison& t : configs) timed += t.timed ? 1 : 0;
  std::string s = fmt::format("geomean speedup {:.3f}x (noise {:.1f}%) over {} config{}", speedup, 100 * noise, timed,
                              timed == 1 ? "" : "s");
  std::string slower;
  for (const TimeComparison& t : configs)
    if (t.direction == Direction::slower)
      slower += fmt::format("{} {} {:.3f}x (noise {:.1f}%)", slower.empty() ? "" : ",", t.config, t.speedup,
                            100 * t.noise);
  if (!slower.empty()) s += "; slower beyond noise on" + slower;
  return s;
}

Outcome TimedOutcome(Direction d) {
  switch (d) {
    case Direction::faster: return Outcome::faster;
    case Direction::slower: return Outcome::slower;
    case Direction::same: break;
  }
  return Outcome::same;
}

void JudgeTimed(EvalResult* result) {
  GeomeanComparison g = CompareOnConfigs(result->configs);
  result->geomean_speedup = g.speedup;
  result->outcome = TimedOutcome(g.direction);
  result->detail = g.Summary();
}

SealVerdict DecideSeal(const EvalResult& confirmation, size_t operator_configs, double min_gain) {
  SealVerdict v;
  if (!OutcomeTimed(confirmation.outcome)) {
    v.reason = std::string("confirmation ended ") + OutcomeName(confirmation.outcome) + ": " + confirmation.detail;
    return v;
  }
  if (confirmation.configs.size() != operator_configs) {
    v.reason = fmt::format("confirmed on {} of {} configs; a seal must serve every config",
                           confirmation.configs.size(), operator_configs);
    return v;
  }
  for (const ConfigResult& c : confirmation.configs) {
    if (!c.correctness.ok) {
      v.reason = "config " + c.config + " is not correct: " + c.correctness.detail;
      return v;
    }
    if (c.candidate.median_us <= 0 || c.incumbent.median_us <= 0) {
      v.reason = "config " + c.config + " has no timing";
      return v;
    }
  }
  v.comparison = CompareOnConfigs(confirmation.configs, min_gain);
  for (const TimeComparison& t : v.comparison.configs) {
    if (t.direction == Direction::slower) {
      v.reason = fmt::format("config {} regresses: {:.3f}x, beyond its noise of {:.1f}%", t.config, t.speedup,
                             100 * t.noise);
      return v;
    }
  }
  const double needed = 1.0 + std::max(min_gain, v.comparison.noise);
  if (v.comparison.geomean_direction != Direction::faster) {
    v.reason = fmt::format(
        "geomean speedup {:.3f}x is within its noise of {:.1f}% or under the minimum gain (needs {:.3f}x)",
        v.comparison.speedup, 100 * v.comparison.noise, needed);
    return v;
  }
  v.seal = true;
  v.reason = fmt::format("geomean speedup {:.3f}x over the incumbent (needed {:.3f}x), correct on every config",
                         v.comparison.speedup, needed);
  return v;
}

VerifyVerdict DecideVerify(const EvalResult& now, size_t operator_configs,
                           const std::vector<std::pair<std::string, double>>& sealed_us) {
  VerifyVerdict v;
  std::map<std::string, double> sealed(sealed_us.begin(), sealed_us.end());
  std::string failures;
  auto fail = [&](const std::string& why) { failures += (failures.empty() ? "" : "; ") + why; };
  if (!OutcomeTimed(now.outcome))
    fail(std::string("not valid any more: ") + OutcomeName(now.outcome) + ": " + now.detail);
  for (const ConfigResult& c : now.configs) {
    VerifyConfig vc;
    vc.config = c.config;
    vc.correct = c.correctness.ok;
    vc.now_us = c.candidate.median_us;
    vc.expert_us = c.incumbent.median_us;
    auto it = sealed.find(c.config);
    vc.sealed_us = it == sealed.end() ? 0 : it->second;
    vc.drift = vc.sealed_us > 0 && vc.now_us > 0 ? vc.now_us / vc.sealed_us - 1 : 0;
    vc.vs_expert = CompareConfig(c);
    if (!vc.correct) fail("config " + c.config + " is wrong: " + c.correctness.detail);
    if (vc.vs_expert.direction == Direction::slower)
      fail(fmt::format("config {}: {:.3f}x the expert reference, slower beyond its noise of {:.1f}%", c.config,
                       vc.vs_expert.speedup, 100 * vc.vs_expert.noise));
    v.configs.push_back(std::move(vc));
  }
  if (failures.empty() && now.configs.size() != operator_configs)
    fail(fmt::format("measured on {} of {} configs", now.configs.size(), operator_configs));
  v.holds = failures.empty();
  v.reason = v.holds ? "correct on every config and slower than the expert reference on none" : failures;
  return v;
}

}  // namespace forgek
