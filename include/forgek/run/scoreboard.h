// The suite scoreboard of `forgek batch --all`: per operator and config, the expert reference's
// time, the sealed time, the speedup, SOL % and the kernel(s) and mechanisms of the seal, built from
// a batch's run summaries. Its rows are the report's (forgek/report/config_row.h) and it is printed
// by the report's scoreboard view (forgek/report/scoreboard.h: ScoreboardMarkdown, ScoreboardJson),
// so that `batch` and `forgek report` share one printer.
#pragma once

#include <vector>

#include "forgek/report/config_row.h"
#include "forgek/report/scoreboard.h"
#include "forgek/run/batch.h"

namespace forgek {

using ScoreboardRow = ConfigRow;

// One row per config of every run (in batch order); an operator whose run failed or measured
// nothing gets one row saying so, so the table shows every operator.
std::vector<ScoreboardRow> BuildScoreboard(const std::vector<BatchRunResult>& results);

}  // namespace forgek
