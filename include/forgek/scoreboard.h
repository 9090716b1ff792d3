// The suite scoreboard: per operator and config, the expert reference's time, the sealed time, the
// speedup, SOL % and the kernel(s) and mechanisms of the seal, from a batch's run summaries.
#pragma once

#include <string>
#include <vector>

#include "forgek/batch.h"

namespace forgek {

struct ScoreboardRow {
  std::string op, config;
  double expert_us = 0;   // 0: not measured
  double sealed_us = 0;   // the seal's confirmed time; the expert's where nothing sealed
  double speedup = 0;     // expert / sealed (1 where nothing sealed)
  double sol_pct = 0;            // of what now serves the config: % of the calibrated bound
  double datasheet_sol_pct = 0;  // the same against the datasheet's peaks (0: no datasheet)
  double floor_us = 0;           // the launch floor inside both bounds (0: unknown)
  std::string kernel;     // the kernel serving the config, or "expert reference"
  std::vector<std::string> mechanisms;
  std::string seal;       // seal id, "" where nothing sealed
  std::string note;       // why nothing sealed, or why the operator has no numbers
};

// One row per config of every run (in batch order); an operator whose run failed or measured
// nothing gets one row saying so, so the table shows every operator.
std::vector<ScoreboardRow> BuildScoreboard(const std::vector<BatchRunResult>& results);

// A markdown table (with a header line naming `title`) and JSON ({"title", "rows": [...]}).
std::string ScoreboardMarkdown(const std::vector<ScoreboardRow>& rows, const std::string& title);
std::string ScoreboardJson(const std::vector<ScoreboardRow>& rows, const std::string& title);

}  // namespace forgek
