// The report's tables as plain text cells, built once and rendered by the markdown and HTML
// printers (each escapes for its own syntax), so that both show the same columns.
#pragma once

#include <string>
#include <vector>

#include "forgek/report/report.h"

namespace forgek::report_tables {

struct Table {
  std::string id;     // the HTML section's anchor
  std::string title;  // the section's heading
  std::string intro;  // a sentence above the table, or ""
  std::vector<std::string> headers;
  std::string align;  // per column: 'l' or 'r'
  std::vector<std::vector<std::string>> rows;  // unescaped text
};

// The suite scoreboard (the view `batch --all` writes): unknown numbers "-".
// `torch`: PyTorch's columns where a row has them (the batch's scoreboard); the report shows them in
// its own table ("Against PyTorch") instead.
Table Scoreboard(const std::vector<ConfigRow>& rows, bool torch = false);
Table Times(const Report& r);
Table Operators(const Report& r);
Table Runs(const Report& r);
Table Seals(const Report& r);
Table Devices(const Report& r);
Table Nightly(const Report& r);
Table Knowledge(const Report& r);
// What `report --torch` read, one row per config it matched (report_torch_table.cc).
Table Torch(const Report& r);
// True when some config row has a comparison against PyTorch beside it.
bool HasTorch(const Report& r);

// The header, the alignment line and the rows, each cell escaped for markdown.
std::string Markdown(const Table& t);

}  // namespace forgek::report_tables
