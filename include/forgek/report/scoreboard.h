// The suite scoreboard: the report's per-config rows as one markdown table and as JSON. `forgek
// batch --all` prints its rows (built from its runs' summaries) through this view, and `forgek
// report` shows the same table built from the store, so there is one scoreboard printer.
#pragma once

#include <string>
#include <vector>

#include "forgek/report/config_row.h"

namespace forgek {

// A run's seal reason as the scoreboard's note: without its per-config list ("; per config: ..."),
// but with what follows it: why the dispatch assembled from it was not sealed.
std::string ShortSealReason(const std::string& reason);

// The scoreboard's table without a title: one line per row, unknown numbers as "-", cells made
// safe for a markdown table (a `|` escaped, a line break as a space).
std::string ScoreboardTable(const std::vector<ConfigRow>& rows);
// `title`, a blank line and the table.
std::string ScoreboardMarkdown(const std::vector<ConfigRow>& rows, const std::string& title);
// {"title", "rows": [{"operator", "config", "expert_us", "sealed_us", "speedup_vs_expert", "sol_pct",
// "datasheet_sol_pct", "floor_us", "kernel", "mechanisms", "seal", "note"}]}; unknown numbers null.
std::string ScoreboardJson(const std::vector<ConfigRow>& rows, const std::string& title);

}  // namespace forgek
