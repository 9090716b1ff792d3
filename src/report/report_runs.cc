// Per run: its attempts, spend and seal, and the convergence series (the best time so far
// against the attempt).
#include <algorithm>

#include "forgek/core/evaluation.h"
#include "forgek/verdict/verdict.h"
#include "report_build.h"

namespace forgek::report_build {
namespace {

// The configs the run's timed attempts measured correct, in the order first seen.
std::vector<std::string> RunConfigs(const RunData& d) {
  std::vector<std::string> configs;
  for (const AttemptRecord& a : d.attempts) {
    if (!OutcomeTimed(a.outcome)) continue;
    for (const AttemptMeasurement& m : a.measurements)
      if (m.correct && m.candidate_us > 0 && std::find(configs.begin(), configs.end(), m.config) == configs.end())
        configs.push_back(m.config);
  }
  return configs;
}

// The geomean of `a`'s times (candidate or incumbent) over `configs`; 0 when it lacks one.
double GeomeanTime(const AttemptRecord& a, const std::vector<std::string>& configs, bool incumbent) {
  std::vector<double> times;
  for (const std::string& c : configs) {
    auto m = std::find_if(a.measurements.begin(), a.measurements.end(),
                          [&](const AttemptMeasurement& x) { return x.config == c; });
    const double us = m == a.measurements.end() || !m->correct ? 0 : incumbent ? m->incumbent_us : m->candidate_us;
    if (!(us > 0)) return 0;
    times.push_back(us);
  }
  return Geomean(times);
}

}  // namespace

std::vector<RunSeries> RunSeriesOf(const Scope& scope) {
  std::vector<RunSeries> out;
  for (const RunData& d : scope.runs) {
    RunSeries s;
    s.id = d.run.id;
    s.op = d.run.operator_name;
    s.arch = d.run.arch;
    s.device = d.run.device;
    s.agent = d.run.agent;
    s.status = d.run.status;
    s.incumbent = d.run.incumbent;
    s.created_at = d.run.created_at;
    s.attempts = static_cast<int>(d.attempts.size());
    s.cost_usd = d.cost_usd;
    s.seal = SummaryField(d.run, "seal");
    s.seal_reason = SummaryField(d.run, "seal_reason");
    s.configs = RunConfigs(d);
    std::vector<double> incumbent;
    double best = 0;
    for (const AttemptRecord& a : d.attempts) {
      if (!OutcomeTimed(a.outcome) || s.configs.empty()) continue;
      const double us = GeomeanTime(a, s.configs, false);
      if (!(us > 0)) continue;
      best = best > 0 ? std::min(best, us) : us;
      s.points.push_back({a.iteration + 1, us, best});
      const double inc = GeomeanTime(a, s.configs, true);
      if (inc > 0) incumbent.push_back(inc);
    }
    double noise = 0;
    MedianAndNoise(incumbent, &s.incumbent_us, &noise);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace forgek::report_build
