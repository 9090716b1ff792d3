// Building the report's plots from its data: which series, which axes, which scales.
#include "report_plots.h"

#include <algorithm>
#include <cmath>

#include "iso_time.h"
#include "report_text.h"

namespace forgek::report_plots {
namespace {

std::vector<double> Ys(const svg::Plot& p) {
  std::vector<double> ys;
  for (const svg::Series& s : p.series)
    for (const auto& xy : s.points) ys.push_back(xy.second);
  return ys;
}

}  // namespace

svg::Plot Convergence(const Report& r) {
  svg::Plot p;
  p.id = "plot-convergence";
  p.title = "Convergence: best time so far per run";
  p.x = {"attempt", svg::Scale::linear, true};
  p.y.label = "best time, us (geomean over configs)";
  for (const RunSeries& s : r.runs) {
    svg::Series line;
    line.label = s.op + " " + report_text::ShortId(s.id).substr(0, 8);
    for (const ConvergencePoint& pt : s.points) line.points.push_back({pt.attempt, pt.best_us});
    if (!line.points.empty()) p.series.push_back(std::move(line));
  }
  // Runs of different operators differ by decades: a log axis keeps each line readable.
  p.y.scale = svg::ScaleFor(Ys(p));
  return p;
}

std::vector<svg::Plot> Rooflines(const Report& r) {
  std::vector<svg::Plot> out;
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceBounds& d = r.devices[i];
    svg::Plot p;
    p.id = "plot-roofline-" + std::to_string(i);
    p.title = "Roofline: " + d.name + " (" + d.arch + ", " + (d.calibrated ? "calibrated" : "datasheet") + " peaks)";
    p.x = {"arithmetic intensity, FLOP/byte", svg::Scale::log};
    p.y = {"throughput, TFLOP/s", svg::Scale::log};
    // The points first: the roofs span their range, widened to show each ridge.
    std::vector<svg::Series> points;
    double lo = 0, hi = 0;
    for (const SealSummary& s : r.seals) {
      if (s.device != d.name || s.arch != d.arch || s.roofline.empty()) continue;
      auto series = std::find_if(points.begin(), points.end(), [&](const svg::Series& x) { return x.label == s.op; });
      if (series == points.end()) {
        svg::Series fresh;
        fresh.label = s.op;
        fresh.line = false;
        fresh.color = svg::PaletteColor(points.size() + 2);
        points.push_back(fresh);
        series = points.end() - 1;
      }
      for (const RooflinePoint& pt : s.roofline) {
        series->points.push_back({pt.intensity, pt.tflops});
        lo = lo > 0 ? std::min(lo, pt.intensity) : pt.intensity;
        hi = std::max(hi, pt.intensity);
      }
    }
    if (points.empty() || !(d.bandwidth_gbps > 0)) continue;
    for (const ComputeCeiling& c : d.ceilings) {
      const double ridge = c.tflops * 1000 / d.bandwidth_gbps;  // FLOP/B where bandwidth meets the ceiling
      lo = std::min(lo, ridge);
      hi = std::max(hi, ridge);
    }
    lo /= 4;
    hi *= 4;
    // TFLOP/s reachable at intensity x: x FLOP/B times GB/s, over 1000 GFLOP per TFLOP.
    auto roof = [&](double x, double ceiling) { return std::min(ceiling, x * d.bandwidth_gbps / 1000); };
    for (size_t k = 0; k < d.ceilings.size(); ++k) {
      const ComputeCeiling& c = d.ceilings[k];
      svg::Series line;
      line.label = c.dtype + " roof " + report_text::Num(c.tflops, "%.0f") + " TFLOP/s";
      line.markers = false;
      line.color = k == 0 ? "#333333" : "#888888";
      line.dashed = k > 0;
      const double ridge = c.tflops * 1000 / d.bandwidth_gbps;
      line.points = {{lo, roof(lo, c.tflops)}, {ridge, c.tflops}, {hi, c.tflops}};
      if (ridge <= lo) line.points.erase(line.points.begin());
      p.series.push_back(std::move(line));
    }
    if (d.ceilings.empty()) {
      svg::Series line;
      line.label = "bandwidth " + report_text::Num(d.bandwidth_gbps, "%.0f") + " GB/s";
      line.markers = false;
      line.color = "#333333";
      line.points = {{lo, roof(lo, 1e300)}, {hi, roof(hi, 1e300)}};
      p.series.push_back(std::move(line));
    }
    for (svg::Series& s : points) p.series.push_back(std::move(s));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<svg::Plot> Nightly(const Report& r) {
  std::vector<svg::Plot> out;
  for (const SealHistory& h : r.nightly) {
    if (h.seal_id.empty()) continue;  // rows about no seal: in the table only
    svg::Plot p;
    p.id = "plot-nightly-" + std::to_string(out.size());
    p.title = "Nightly: " + h.op + " seal " + report_text::ShortId(h.seal_id);
    p.x = {"date of the check (UTC)", svg::Scale::time};
    p.y.label = "time, us";
    std::vector<std::string> configs;
    for (const SealCheckRecord& c : h.checks)
      if (!c.config.empty() && std::find(configs.begin(), configs.end(), c.config) == configs.end())
        configs.push_back(c.config);
    for (size_t i = 0; i < configs.size(); ++i) {
      svg::Series now, expert;
      now.label = configs[i];
      expert.label = configs[i] + " expert";
      now.color = expert.color = svg::PaletteColor(i);
      expert.dashed = true;
      expert.markers = false;
      for (const SealCheckRecord& c : h.checks) {
        double t = 0;
        if (c.config != configs[i] || !report_time::ParseIso(c.checked_at, &t)) continue;
        if (c.now_us > 0) now.points.push_back({t, c.now_us});
        if (c.expert_us > 0) expert.points.push_back({t, c.expert_us});
      }
      if (!now.points.empty()) p.series.push_back(std::move(now));
      if (!expert.points.empty()) p.series.push_back(std::move(expert));
    }
    p.y.scale = svg::ScaleFor(Ys(p));
    if (!p.series.empty()) out.push_back(std::move(p));
  }
  return out;
}

svg::Plot Knowledge(const Report& r) {
  svg::Plot p;
  p.id = "plot-knowledge";
  p.title = "Knowledge: decisions known after each run, by verdict";
  p.x = {"run (in the order they started)", svg::Scale::linear, true};
  p.y = {"decisions", svg::Scale::linear, true, true};
  const std::pair<const char*, const char*> verdicts[] = {
      {"validated", "#59a14f"}, {"hypothesis", "#4e79a7"}, {"refuted", "#e15759"}};
  for (const auto& [verdict, color] : verdicts) {
    svg::Series s;
    s.label = verdict;
    s.color = color;
    for (size_t i = 0; i < r.knowledge.size(); ++i) {
      auto n = r.knowledge[i].known.find(verdict);
      s.points.push_back({static_cast<double>(i + 1), n == r.knowledge[i].known.end() ? 0.0 : n->second});
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

}  // namespace forgek::report_plots
