// Text helpers every printer of the report shares: escaping for HTML/SVG, markdown cells and CSV
// fields, and numbers where 0 means unknown.
#pragma once

#include <string>
#include <vector>

namespace forgek::report_text {

// Text for an element or a quoted attribute of HTML and SVG: core's XmlEscape.
std::string Html(const std::string& text);

// A markdown table cell: valid UTF-8, `|` escaped, < and > as &lt; &gt; (inline HTML), line breaks
// and tabs as spaces, other control characters as U+FFFD.
std::string MarkdownCell(const std::string& text);

// A CSV field (RFC 4180): valid UTF-8, control characters but tab and line breaks as U+FFFD, quoted
// when it holds a comma, quote or line break, quotes doubled.
std::string CsvField(const std::string& text);

// `v` printed with `fmt` (a printf format of one double), or `unknown` when v <= 0 or not finite.
std::string Num(double v, const char* fmt, const char* unknown = "-");

// A median and its relative noise: "12.30 ±1.2%", "12.30" without a noise, "-" when unknown.
std::string TimeCell(double us, double noise);

// Items joined by `sep`.
std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ");

// At most `n` bytes of `text`, cut at a character boundary, with "…" when cut (legend labels).
std::string Shorten(const std::string& text, size_t n);

// The first 12 characters of an id (what `seal list` shows).
std::string ShortId(const std::string& id);

}  // namespace forgek::report_text
