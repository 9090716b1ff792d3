// Rows of `forgek ops bench`: tagged cells per (operator, config), and the text/json/markdown printers.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/evaluation.h"

namespace forgek::cli {

// One config's expert reference as measured. `status` is "ok", or the outcome that stopped it
// (wrong, crash, launch_error, timeout, ...) with `detail`; failed rows carry no timing.
struct BenchRow {
  std::string op, config, reference, status = "ok", detail;
  TimingStats time;          // the reference's samples
  double flops = 0, bytes = 0;  // the operator's formulas under this config
  double sol_us = 0;         // the worker's bound: max(roofline from calibrated peaks, launch floor)
  double datasheet_sol_us = 0;  // the same from the datasheet's peaks (0: no datasheet)
  double floor_us = 0;       // the launch floor inside both (0: unknown)
};

// How a printer renders a cell: by what it measures, not by column (nvbench's column hints).
enum class BenchTag { text, time_us, noise, tflops, gbps, percent };

struct BenchCell {
  std::string key;     // JSON key
  std::string header;  // column title
  BenchTag tag;
  std::string text;    // BenchTag::text
  double value = 0;    // the other tags
  bool present = true; // false: not measured ("-", null)
};

// The cells of `row` in column order: operator, config, reference, status, time, noise, samples
// aside (in JSON only), TFLOP/s, GB/s, SOL time and SOL %.
std::vector<BenchCell> TagRow(const BenchRow& row);

// Aligned columns for a terminal, with `device` as the title line.
std::string BenchText(const std::vector<BenchRow>& rows, const std::string& device);
// A GitHub-flavoured markdown table, preceded by a line naming `device`.
std::string BenchMarkdown(const std::vector<BenchRow>& rows, const std::string& device);
// {"device": ..., "rows": [{key: value, ..., "samples": n, "detail": ...}]}; unmeasured values null.
nlohmann::json BenchJson(const std::vector<BenchRow>& rows, const std::string& device);

}  // namespace forgek::cli
