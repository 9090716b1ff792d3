// Escaping control characters in text that is printed.
#include "cli/printable.h"

#include <cstdio>

namespace forgek::cli {

std::string Printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n') {
      out += ch;
    } else if (c == 0) {
      out += "\\0";
    } else if (c == 0x1b) {
      out += "\\e";
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace forgek::cli
