// Tests of the report's SVG writer: scales and ticks, what is dropped, escaping, and empty plots.
#include "report/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "report/iso_time.h"
#include "report/svg_axis.h"

namespace forgek::svg {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgPlot, APlotWithoutADrawablePointIsNotDrawn) {
  Plot p;
  p.id = "empty";
  EXPECT_EQ(Render(p), "");
  p.series.push_back({"zeros on a log axis", {{0, 0}, {1, -1}}});
  p.y.scale = Scale::log;
  EXPECT_EQ(Render(p), "");
}

TEST(SvgPlot, PointsBecomeMarksWithTooltipsAndNonFinitePointsAreDropped) {
  Plot p;
  p.id = "p1";
  p.title = "t";
  Series s;
  s.label = "run <a&b>";
  s.points = {{1, 10}, {2, std::nan("")}, {3, 8}, {4, std::numeric_limits<double>::infinity()}};
  p.series.push_back(s);
  const std::string svg = Render(p);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"p1\"", 0), 0u) << svg;
  EXPECT_EQ(Count(svg, "<circle class=\"mark\""), 2u);
  EXPECT_EQ(Count(svg, "<polyline"), 1u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_NE(svg.find("run &lt;a&amp;b&gt;"), std::string::npos) << "labels are escaped";
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
}

TEST(SvgPlot, TimesThatSpanDecadesGetALogAxisWithADecadeTicks) {
  EXPECT_EQ(ScaleFor({5, 60, 1500}), Scale::log);
  EXPECT_EQ(ScaleFor({5, 6, 9}), Scale::linear);
  EXPECT_EQ(ScaleFor({0, 100}), Scale::linear) << "a zero has no place on a log axis";
  Axis a;
  a.scale = Scale::log;
  AxisFit f = FitAxis(a, {5, 1500});
  EXPECT_DOUBLE_EQ(f.lo, 1);
  EXPECT_DOUBLE_EQ(f.hi, 10000);
  ASSERT_EQ(f.ticks.size(), 5u);
  EXPECT_EQ(f.ticks[1].label, "10");
  EXPECT_NEAR(f.Fraction(100), 0.5, 1e-12);
}

TEST(SvgPlot, LinearTicksAreRoundAndCountsStartAtZero) {
  Axis a;
  AxisFit f = FitAxis(a, {0.3, 0.9});
  EXPECT_NEAR(f.lo, 0.2, 1e-12) << "steps of 0.2, the range rounded out to them";
  EXPECT_NEAR(f.hi, 1.0, 1e-12);
  EXPECT_EQ(f.ticks[1].label, "0.4");
  a.from_zero = true;
  a.integer_ticks = true;
  f = FitAxis(a, {3, 7});
  EXPECT_DOUBLE_EQ(f.lo, 0);
  for (const Tick& t : f.ticks) EXPECT_DOUBLE_EQ(t.value, std::round(t.value)) << "no tick between whole counts";
  f = FitAxis(a, {0, 0});
  EXPECT_DOUBLE_EQ(f.lo, 0);
  EXPECT_DOUBLE_EQ(f.hi, 1) << "all-zero counts still have a range";
}

TEST(SvgPlot, DateAxesTickOnTheCalendar) {
  double a = 0, b = 0;
  ASSERT_TRUE(report_time::ParseIso("2026-01-01T02:00:00Z", &a));
  ASSERT_TRUE(report_time::ParseIso("2026-01-09T02:00:00Z", &b));
  EXPECT_DOUBLE_EQ(b - a, 8 * 86400.0);
  EXPECT_DOUBLE_EQ(a, 1767232800.0);
  EXPECT_FALSE(report_time::ParseIso("yesterday", &a));
  EXPECT_FALSE(report_time::ParseIso("2026-13-01", &a));
  Axis axis;
  axis.scale = Scale::time;
  AxisFit f = FitAxis(axis, {1767232800.0, 1767232800.0 + 8 * 86400});
  ASSERT_FALSE(f.ticks.empty());
  EXPECT_EQ(f.ticks[0].label.size(), 10u) << "whole days: YYYY-MM-DD, " << f.ticks[0].label;
  EXPECT_EQ(report_time::FormatDate(1767232800.0, false), "2026-01-01");
  f = FitAxis(axis, {1767232800.0});
  EXPECT_LT(f.lo, 1767232800.0) << "one check still gets a range around it";
  EXPECT_GT(f.hi, 1767232800.0);
}

TEST(SvgPlot, TheLegendNamesEachSeriesAndSaysHowManyItLeavesOut) {
  Plot p;
  p.id = "many";
  p.height = 120;  // room for a few legend rows only
  for (int i = 0; i < 12; ++i) p.series.push_back({"series " + std::to_string(i), {{1.0 * i, 1.0 * i}}});
  const std::string svg = Render(p);
  EXPECT_NE(svg.find("series 0"), std::string::npos);
  EXPECT_NE(svg.find("more (see the tables)"), std::string::npos) << svg;
  EXPECT_EQ(Count(svg, "<circle class=\"mark\""), 12u) << "every point is drawn, listed in the legend or not";
}

TEST(SvgPlot, BarsStandSideBySidePerCategoryFromTheBottom) {
  Plot p;
  p.id = "bars";
  p.categories = {"small", "large <2>"};
  p.y.from_zero = true;
  Series a{"seal", {{0, 4}, {1, 80}, {2, 9}, {0.5, 9}}};  // x 2 and 0.5 name no category: dropped
  Series b{"eager", {{0, 16}, {1, 100}}};
  a.bars = b.bars = true;
  p.series = {a, b};
  const std::string svg = Render(p);
  ASSERT_EQ(Count(svg, "<rect class=\"mark\""), 4u) << svg;
  EXPECT_EQ(Count(svg, "<polyline"), 0u) << "bars draw no line";
  EXPECT_EQ(Count(svg, "<circle"), 0u);
  EXPECT_NE(svg.find("<title>eager: large &lt;2&gt;, 100</title>"), std::string::npos) << "the category names the bar";
  EXPECT_NE(svg.find(">large &lt;2&gt;</text>"), std::string::npos) << "the category is the x tick's label";
  // The first bar of a category ends where the second starts, both down to the frame's bottom.
  auto attr = [&](size_t from, const std::string& name) {
    const size_t at = svg.find(" " + name + "=\"", from) + name.size() + 3;
    return std::stod(svg.substr(at, svg.find('"', at) - at));
  };
  const size_t seal0 = svg.find("<rect class=\"mark\"");
  const size_t eager0 = svg.find("<rect class=\"mark\"", svg.find("<g class=\"series\">", seal0));
  EXPECT_NEAR(attr(seal0, "x") + attr(seal0, "width"), attr(eager0, "x"), 0.02);
  EXPECT_NEAR(attr(seal0, "y") + attr(seal0, "height"), attr(eager0, "y") + attr(eager0, "height"), 0.02);
  EXPECT_GT(attr(seal0, "height"), 0);
}

}  // namespace
}  // namespace forgek::svg
