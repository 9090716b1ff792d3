// Preprocessor directives read from a source the way the preprocessor sees them: splices joined,
// comments dropped. Shared by the #include check and the device library's expansion.
#pragma once

#include <string>
#include <vector>

namespace forgek {

// One logical line: physical lines joined by backslash-newline, comments replaced by one space,
// string and character literals kept whole.
struct LogicalLine {
  std::string text;
  int line = 0;      // the physical line it starts on (1-based)
  int end_line = 0;  // the physical line it ends on
};

std::vector<LogicalLine> LogicalLines(const std::string& source);

// An including directive: #include, #include_next, #import or #embed.
struct IncludeDirective {
  std::string directive;  // "include", "include_next", "import", "embed"
  bool literal = false;   // the header is named as <name> or "name"; false when made by a macro
  char open = 0;          // '<' or '"' when literal
  std::string header;     // the name between the delimiters
  int line = 0;           // where the directive starts (1-based)
  int end_line = 0;       // the physical line it ends on
  int column = 0;         // of the '#' (1-based)
};

std::vector<IncludeDirective> IncludeDirectives(const std::string& source);

}  // namespace forgek
