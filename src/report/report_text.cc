// Escaping and number formatting shared by the report's printers.
#include "report_text.h"

#include <cmath>
#include <cstdio>

#include "forgek/core/utf8_text.h"

namespace forgek::report_text {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool Control(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

}  // namespace

std::string Html(const std::string& text) { return XmlEscape(text); }

std::string MarkdownCell(const std::string& text) {
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    if (c == '|')
      out += "\\|";
    else if (c == '<')
      out += "&lt;";  // a renderer that passes inline HTML through must not meet a user file's tag
    else if (c == '>')
      out += "&gt;";
    else if (c == '\n' || c == '\r' || c == '\t')
      out += ' ';
    else if (Control(c))
      out += kReplacement;  // an ESC from a user file must not drive the terminal that shows it
    else
      out += c;
  }
  return out;
}

std::string CsvField(const std::string& text) {
  std::string valid;
  for (char c : ValidUtf8(text)) {
    if (Control(c) && c != '\t' && c != '\n' && c != '\r')
      valid += kReplacement;
    else
      valid += c;
  }
  if (valid.find_first_of(",\"\r\n") == std::string::npos) return valid;
  std::string out = "\"";
  for (char c : valid) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Num(double v, const char* fmt, const char* unknown) {
  if (!(v > 0) || !std::isfinite(v)) return unknown;
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string TimeCell(double us, double noise) {
  if (!(us > 0) || !std::isfinite(us)) return "-";
  std::string out = Num(us, "%.2f");
  if (noise > 0) out += " \xC2\xB1" + Num(100 * noise, "%.1f") + "%";
  return out;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : sep) + items[i];
  return out;
}

std::string Shorten(const std::string& text, size_t n) {
  if (text.size() <= n) return text;
  size_t cut = n;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return text.substr(0, cut) + "\xE2\x80\xA6";
}

std::string ShortId(const std::string& id) { return id.substr(0, 12); }

}  // namespace forgek::report_text
