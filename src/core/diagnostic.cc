// Formatting of located errors.
#include "forgek/diagnostic.h"

namespace forgek {

std::string Diagnostic::str() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ":" + std::to_string(line);
      if (column > 0) out += ":" + std::to_string(column);
    }
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line);
    if (column > 0) out += ", column " + std::to_string(column);
    out += ": ";
  }
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

std::string FormatDiagnostics(const Diagnostics& diags) {
  std::string out;
  for (const Diagnostic& d : diags) {
    if (!out.empty()) out += "\n";
    out += d.str();
  }
  return out;
}

}  // namespace forgek
