// The plots of a report, as data for the SVG writer: convergence, roofline, nightly history,
// knowledge over time and the comparisons against PyTorch. Only the HTML printer draws them; the
// other formats carry their numbers.
#pragma once

#include <vector>

#include "forgek/report/report.h"
#include "svg_plot.h"

namespace forgek::report_plots {

// The best time so far (geomean over the run's configs) against the attempt, one line per run.
svg::Plot Convergence(const Report& r);
// Per device with bounds: its roofs (bandwidth, and a ceiling per dtype) and its seals' configs.
std::vector<svg::Plot> Rooflines(const Report& r);
// Per seal with checks: each config's time now and the expert's, against the date of the check.
std::vector<svg::Plot> Nightly(const Report& r);
// Decisions known after each run, one line per verdict.
svg::Plot Knowledge(const Report& r);
// Per operator with comparisons against PyTorch: the seal's, eager's and compile's times as bars
// per config (report_torch_plot.cc).
std::vector<svg::Plot> Torch(const Report& r);

}  // namespace forgek::report_plots
