// A small SVG plot writer for the HTML report: axes with ticks and labels (linear, log or dates),
// lines, points, bars side by side per category and a legend, every text escaped. No script: the
// file reads the same in any viewer.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace forgek::svg {

enum class Scale { linear, log, time };  // time: seconds since 1970, ticks labelled as UTC dates

struct Axis {
  std::string label;
  Scale scale = Scale::linear;
  bool integer_ticks = false;  // linear only: no tick between whole numbers (attempt and run counts)
  bool from_zero = false;      // linear only: the range starts at 0 (counts)
};

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
  bool line = true;     // a polyline through the points
  bool markers = true;  // a circle on each point, with a tooltip (<title>)
  bool dashed = false;
  std::string color;    // "" for the palette's colour of the series' index
  bool bars = false;    // a bar per point from the bottom of the plot, instead of a line and markers
};

struct Plot {
  std::string id;  // the <svg>'s id, unique in the page
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  // A bar chart's groups: when not empty, x is the index of a category, labelled by its name, and
  // the bar series of a category stand side by side around it.
  std::vector<std::string> categories;
  int width = 760, height = 400;
};

// The colour of the i-th series of a plot (a palette that stays apart when printed grey).
std::string PaletteColor(size_t i);

// Log when every value is positive and the largest is at least ten times the smallest (times that
// span decades); else linear.
Scale ScaleFor(const std::vector<double>& values);

// The <svg> element of `plot`; "" when no series holds a point it can draw (not finite, or not
// positive on a log axis): a plot without marks is not drawn.
std::string Render(const Plot& plot);

}  // namespace forgek::svg
