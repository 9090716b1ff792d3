// The range and ticks of one plot axis (linear, log, dates), and the map from values to pixels.
#pragma once

#include <string>
#include <vector>

#include "svg_plot.h"

namespace forgek::svg {

struct Tick {
  double value = 0;
  std::string label;
};

// An axis fitted to its data: [lo, hi] covers every value with round ends, and `ticks` lie in it.
struct AxisFit {
  Scale scale = Scale::linear;
  double lo = 0, hi = 1;
  std::vector<Tick> ticks;

  // Where `v` falls on [0, 1] between lo and hi (log10 on a log axis).
  double Fraction(double v) const;
};

// Fits an axis to `values` (finite, and positive on a log axis: the caller drops the others; at
// least one). A single value gets a range around it.
AxisFit FitAxis(const Axis& axis, const std::vector<double>& values);

// A bar chart's x axis: [-0.5, n - 0.5], a tick at each category's index labelled by its name.
AxisFit CategoryAxis(const std::vector<std::string>& categories);

// `v` as a tick or tooltip label: "%g"-like, short.
std::string Label(double v);

}  // namespace forgek::svg
