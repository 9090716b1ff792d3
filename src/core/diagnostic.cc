// Formatting of located errors.
#include "forgek/core/diagnostic.h"

#include "forgek/core/spec_limits.h"

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
  // Input echoed in a message (an expression, a value) is cut: a hostile file gets a short answer.
  if (message.size() <= kMaxDiagnosticChars) {
    out += message;
  } else {
    out += message.substr(0, kMaxDiagnosticChars) + "... (" + std::to_string(message.size() - kMaxDiagnosticChars) +
           " more characters cut)";
  }
  return out;
}

std::string FormatDiagnostics(const Diagnostics& diags) {
  std::string out;
  for (size_t i = 0; i < diags.size() && i < kMaxDiagnosticsShown; ++i) {
    if (!out.empty()) out += "\n";
    out += diags[i].str();
  }
  if (diags.size() > kMaxDiagnosticsShown)
    out += "\n... and " + std::to_string(diags.size() - kMaxDiagnosticsShown) + " more";
  return out;
}

std::string JoinShown(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < kMaxDiagnosticsShown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > kMaxDiagnosticsShown)
    out += ", ... and " + std::to_string(items.size() - kMaxDiagnosticsShown) + " more";
  return out;
}

}  // namespace forgek
