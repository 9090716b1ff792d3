// Axis ranges and ticks for the report's plots: round steps (1, 2, 5 x 10^k), whole decades on a
// log axis, calendar steps on a date axis, named categories on a bar chart's.
#include "svg_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "iso_time.h"
#include "report_text.h"

namespace forgek::svg {
namespace {

// The round step (1, 2 or 5 times a power of ten) nearest above `raw`.
double NiceStep(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

AxisFit Linear(const Axis& axis, double lo, double hi) {
  AxisFit f;
  f.scale = Scale::linear;
  if (hi - lo <= 0 && axis.from_zero && lo == 0) {
    hi = 1;  // counts that are all zero
  } else if (hi - lo <= 0) {
    const double pad = std::fabs(lo) > 0 ? std::fabs(lo) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  double step = NiceStep((hi - lo) / 5);
  if (axis.integer_ticks) step = std::max(1.0, std::round(step));
  f.lo = std::floor(lo / step) * step;
  f.hi = std::ceil(hi / step) * step;
  // Ticks by index, not by accumulation: no drift of 0.1 + 0.2.
  const int n = static_cast<int>(std::lround((f.hi - f.lo) / step));
  for (int i = 0; i <= n && i <= 50; ++i) {
    const double v = f.lo + i * step;
    f.ticks.push_back({v, Label(std::fabs(v) < step * 1e-9 ? 0.0 : v)});
  }
  return f;
}

AxisFit Log(double lo, double hi) {
  AxisFit f;
  f.scale = Scale::log;
  double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi));
  if (b <= a) b = a + 1;
  f.lo = std::pow(10.0, a);
  f.hi = std::pow(10.0, b);
  // Every decade up to 8 of them, else every k-th: labels must not overlap.
  const int decades = static_cast<int>(b - a);
  const int every = std::max(1, (decades + 7) / 8);
  for (int e = static_cast<int>(a); e <= static_cast<int>(b); e += every) {
    const double v = std::pow(10.0, e);
    f.ticks.push_back({v, Label(v)});
  }
  return f;
}

AxisFit Time(double lo, double hi) {
  AxisFit f;
  f.scale = Scale::time;
  if (hi - lo < 3600) {
    lo -= 43200;
    hi += 43200;
  }
  // Calendar steps: an hour to a year; about six ticks.
  const double hour = 3600, day = 86400;
  double step = 365 * day;
  for (double s : {hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day, 30 * day, 91 * day})
    if ((hi - lo) / s <= 6) {
      step = s;
      break;
    }
  f.lo = std::floor(lo / step) * step;
  f.hi = std::ceil(hi / step) * step;
  const int n = static_cast<int>(std::lround((f.hi - f.lo) / step));
  for (int i = 0; i <= n && i <= 50; ++i) {
    const double v = f.lo + i * step;
    f.ticks.push_back({v, report_time::FormatDate(v, step < day)});
  }
  return f;
}

}  // namespace

double AxisFit::Fraction(double v) const {
  if (scale == Scale::log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return (v - lo) / (hi - lo);
}

std::string Label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

AxisFit FitAxis(const Axis& axis, const std::vector<double>& values) {
  double lo = values.empty() ? 0 : values[0], hi = lo;
  for (double v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (axis.scale == Scale::linear && axis.from_zero && lo > 0) lo = 0;
  switch (axis.scale) {
    case Scale::log: return Log(lo, hi);
    case Scale::time: return Time(lo, hi);
    case Scale::linear: break;
  }
  return Linear(axis, lo, hi);
}

AxisFit CategoryAxis(const std::vector<std::string>& categories) {
  AxisFit f;
  f.lo = -0.5;
  f.hi = std::max<double>(1, static_cast<double>(categories.size())) - 0.5;
  for (size_t i = 0; i < categories.size(); ++i)
    f.ticks.push_back({static_cast<double>(i), report_text::Shorten(categories[i], 18)});
  return f;
}

Scale ScaleFor(const std::vector<double>& values) {
  double lo = 0, hi = 0;
  bool any = false;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (v <= 0) return Scale::linear;
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  return any && hi >= 10 * lo ? Scale::log : Scale::linear;
}

}  // namespace forgek::svg
