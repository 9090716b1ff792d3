// Escaping control characters in text that is printed.
#include "printable.h"

#include <cstdio>
#include <string_view>

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

std::string ShellQuote(const std::string& word) {
  auto plain = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_.,/:=+@%").find(static_cast<char>(c)) != std::string_view::npos;
  };
  auto control = [](unsigned char c) { return c < 0x20 || c == 0x7f; };
  bool all_plain = !word.empty(), any_control = false;
  for (char ch : word) {
    all_plain = all_plain && plain(static_cast<unsigned char>(ch));
    any_control = any_control || control(static_cast<unsigned char>(ch));
  }
  if (all_plain) return word;
  if (!any_control) {
    std::string out = "'";
    for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
  }
  std::string out = "$'";
  for (char ch : word) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (control(c)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out + "'";
}

}  // namespace forgek::cli
