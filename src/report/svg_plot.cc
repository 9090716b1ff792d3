// Rendering one plot as an inline <svg>: frame, ticks, axis labels, series (lines and points, or bars
// per category, with tooltips) and a legend. Every coordinate is finite and every text escaped.
#include "svg_plot.h"

#include <cmath>
#include <cstdio>

#include "iso_time.h"
#include "report_text.h"
#include "svg_axis.h"

namespace forgek::svg {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#b07aa1", "#9c755f", "#edc948", "#ff9da7", "#bab0ac"};
constexpr int kLeft = 72, kRight = 200, kTop = 34, kBottom = 54;
constexpr int kLegendRow = 16;

std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

bool Drawable(double v, Scale s) { return std::isfinite(v) && (s != Scale::log || v > 0); }

std::string Color(const Series& s, size_t index) {
  return s.color.empty() ? PaletteColor(index) : report_text::Html(s.color);
}

std::string ValueText(double v, Scale s) { return s == Scale::time ? report_time::FormatDate(v, true) : Label(v); }

// The frame's pixel box.
struct Box {
  double x0, y0, x1, y1;
};

std::string XAxis(const AxisFit& f, const Axis& a, const Box& b) {
  std::string out = "<g class=\"axis x\">";
  for (const Tick& t : f.ticks) {
    const double x = b.x0 + f.Fraction(t.value) * (b.x1 - b.x0);
    out += "<line x1=\"" + Px(x) + "\" y1=\"" + Px(b.y1) + "\" x2=\"" + Px(x) + "\" y2=\"" + Px(b.y1 + 5) +
           "\" stroke=\"#333\"/>";
    out += "<line class=\"grid\" x1=\"" + Px(x) + "\" y1=\"" + Px(b.y0) + "\" x2=\"" + Px(x) + "\" y2=\"" + Px(b.y1) +
           "\" stroke=\"#e4e4e4\"/>";
    out += "<text x=\"" + Px(x) + "\" y=\"" + Px(b.y1 + 18) + "\" text-anchor=\"middle\">" +
           report_text::Html(t.label) + "</text>";
  }
  out += "<text class=\"label\" x=\"" + Px((b.x0 + b.x1) / 2) + "\" y=\"" + Px(b.y1 + 40) +
         "\" text-anchor=\"middle\">" + report_text::Html(a.label) + "</text></g>";
  return out;
}

std::string YAxis(const AxisFit& f, const Axis& a, const Box& b) {
  std::string out = "<g class=\"axis y\">";
  for (const Tick& t : f.ticks) {
    const double y = b.y1 - f.Fraction(t.value) * (b.y1 - b.y0);
    out += "<line x1=\"" + Px(b.x0 - 5) + "\" y1=\"" + Px(y) + "\" x2=\"" + Px(b.x0) + "\" y2=\"" + Px(y) +
           "\" stroke=\"#333\"/>";
    out += "<line class=\"grid\" x1=\"" + Px(b.x0) + "\" y1=\"" + Px(y) + "\" x2=\"" + Px(b.x1) + "\" y2=\"" + Px(y) +
           "\" stroke=\"#e4e4e4\"/>";
    out += "<text x=\"" + Px(b.x0 - 8) + "\" y=\"" + Px(y + 4) + "\" text-anchor=\"end\">" +
           report_text::Html(t.label) + "</text>";
  }
  const double mid = (b.y0 + b.y1) / 2;
  out += "<text class=\"label\" x=\"16\" y=\"" + Px(mid) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
         Px(mid) + ")\">" + report_text::Html(a.label) + "</text></g>";
  return out;
}

}  // namespace

std::string PaletteColor(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

std::string Render(const Plot& plot) {
  const bool categorical = !plot.categories.empty();
  // On a bar chart x must name a category: a whole index within the list.
  auto drawable = [&](double x, double y) {
    const bool x_ok = categorical ? x >= 0 && x < static_cast<double>(plot.categories.size()) && x == std::floor(x)
                                  : Drawable(x, plot.x.scale);
    return x_ok && Drawable(y, plot.y.scale);
  };
  auto x_text = [&](double x) {
    return categorical ? plot.categories[static_cast<size_t>(x)] : ValueText(x, plot.x.scale);
  };
  std::vector<double> xs, ys;
  for (const Series& s : plot.series)
    for (const auto& [x, y] : s.points)
      if (drawable(x, y)) {
        xs.push_back(x);
        ys.push_back(y);
      }
  if (xs.empty()) return "";
  const AxisFit fx = categorical ? CategoryAxis(plot.categories) : FitAxis(plot.x, xs), fy = FitAxis(plot.y, ys);
  const Box b{static_cast<double>(kLeft), static_cast<double>(kTop), static_cast<double>(plot.width - kRight),
              static_cast<double>(plot.height - kBottom)};
  auto px = [&](double x) { return b.x0 + fx.Fraction(x) * (b.x1 - b.x0); };
  auto py = [&](double y) { return b.y1 - fy.Fraction(y) * (b.y1 - b.y0); };

  const std::string id = report_text::Html(plot.id);
  const std::string w = std::to_string(plot.width), h = std::to_string(plot.height);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + id + "\" class=\"plot\" width=\"" + w +
                    "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\" aria-labelledby=\"" + id +
                    "-title\">";
  out += "<title id=\"" + id + "-title\">" + report_text::Html(plot.title) + "</title>";
  out += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#fff\"/>";
  out += "<text class=\"title\" x=\"" + Px(b.x0) + "\" y=\"20\">" + report_text::Html(plot.title) + "</text>";
  out += XAxis(fx, plot.x, b) + YAxis(fy, plot.y, b);
  out += "<rect class=\"frame\" x=\"" + Px(b.x0) + "\" y=\"" + Px(b.y0) + "\" width=\"" + Px(b.x1 - b.x0) +
         "\" height=\"" + Px(b.y1 - b.y0) + "\" fill=\"none\" stroke=\"#333\"/>";

  // Bars of one category share 80% of its width, in the order of their series.
  size_t bar_series = 0;
  for (const Series& s : plot.series) bar_series += s.bars ? 1 : 0;
  const double slot = (b.x1 - b.x0) / (fx.hi - fx.lo);
  const double bar_w = bar_series > 0 ? 0.8 * slot / static_cast<double>(bar_series) : 0;

  std::string legend = "<g class=\"legend\">";
  const int legend_rows = (plot.height - kTop) / kLegendRow - 1;
  int shown = 0, hidden = 0;
  size_t bar_index = 0;
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const Series& s = plot.series[i];
    std::string points, marks;
    for (const auto& [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      points += (points.empty() ? "" : " ") + Px(px(x)) + "," + Px(py(y));
      const std::string tip = "<title>" + report_text::Html(s.label) + ": " + report_text::Html(x_text(x)) + ", " +
                              report_text::Html(ValueText(y, plot.y.scale)) + "</title>";
      if (s.bars)
        marks += "<rect class=\"mark\" x=\"" + Px(px(x) - 0.4 * slot + static_cast<double>(bar_index) * bar_w) +
                 "\" y=\"" + Px(py(y)) + "\" width=\"" + Px(bar_w) + "\" height=\"" + Px(b.y1 - py(y)) +
                 "\" fill=\"" + Color(s, i) + "\">" + tip + "</rect>";
      else if (s.markers)
        marks += "<circle class=\"mark\" cx=\"" + Px(px(x)) + "\" cy=\"" + Px(py(y)) + "\" r=\"3.5\" fill=\"" +
                 Color(s, i) + "\">" + tip + "</circle>";
    }
    if (s.bars) ++bar_index;
    if (points.empty()) continue;
    out += "<g class=\"series\">";
    if (s.line && !s.bars)
      out += "<polyline class=\"line\" points=\"" + points + "\" fill=\"none\" stroke=\"" + Color(s, i) +
             "\" stroke-width=\"1.8\"" + (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
    out += marks + "</g>";
    if (shown >= legend_rows) {
      ++hidden;
      continue;
    }
    const double ly = b.y0 + 6 + shown * kLegendRow;
    const double lx = b.x1 + 14;
    if (s.bars)
      legend += "<rect x=\"" + Px(lx) + "\" y=\"" + Px(ly - 5) + "\" width=\"18\" height=\"10\" fill=\"" + Color(s, i) +
                "\"/>";
    else
      legend += "<line x1=\"" + Px(lx) + "\" y1=\"" + Px(ly) + "\" x2=\"" + Px(lx + 18) + "\" y2=\"" + Px(ly) +
                "\" stroke=\"" + Color(s, i) + "\" stroke-width=\"3\"" + (s.dashed ? " stroke-dasharray=\"4 3\"" : "") +
                "/>";
    legend += "<text x=\"" + Px(lx + 24) + "\" y=\"" + Px(ly + 4) + "\">" +
              report_text::Html(report_text::Shorten(s.label, 28)) + "</text>";
    ++shown;
  }
  if (hidden > 0)
    legend += "<text x=\"" + Px(b.x1 + 14) + "\" y=\"" + Px(b.y0 + 10 + shown * kLegendRow) + "\">+" +
              std::to_string(hidden) + " more (see the tables)</text>";
  out += legend + "</g></svg>";
  return out;
}

}  // namespace forgek::svg
