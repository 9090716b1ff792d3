// A located error: which file, which field, which line and column, and what is wrong.
#pragma once

#include <string>
#include <vector>

namespace forgek {

// One problem found in an input. Formats as "FILE:LINE:COL: FIELD: MESSAGE", leaving out what
// is unknown, so that editors and people can jump to it.
struct Diagnostic {
  std::string file;     // path as the user gave it, or "" when the input is not a file
  std::string field;    // JSON path such as "launches[0].grid[1]", or "" when not in a field
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;       // 1-based; 0 when unknown
  std::string message;  // what is wrong and, where possible, what would be right

  std::string str() const;
};

// Several diagnostics, for validators that report everything they find rather than the first.
using Diagnostics = std::vector<Diagnostic>;
std::string FormatDiagnostics(const Diagnostics& diags);

// `items` joined with ", ": the first kMaxDiagnosticsShown (20) of them, then "... and M more",
// the rule of every list in a message (known operators, diagnostics), however long the list.
std::string JoinShown(const std::vector<std::string>& items);

}  // namespace forgek
