// Text from outside (an LLM provider's reply, an error page) made valid UTF-8 before forgek keeps or
// shows it: JSON output, the store's exports and replays refuse anything else.
#pragma once

#include <string>

namespace forgek {

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(const std::string& text);

// `text` with every byte that does not start a well-formed UTF-8 sequence (a Latin-1 "é", a cut
// multi-byte character) replaced by U+FFFD, one per byte; valid text is returned unchanged.
std::string ValidUtf8(const std::string& text);

// `text` as valid UTF-8 (ValidUtf8) with & < > " ' escaped (' as &#39;, which XML and HTML both
// read), line breaks and tabs as character references (kept inside attribute values), and every
// other character XML 1.0 forbids (control characters, DEL, U+FFFE, U+FFFF) replaced by U+FFFD:
// safe inside an element or a quoted attribute of XML, HTML and SVG. Operator names, kernel labels
// and error text come from user files and must not open a tag.
std::string XmlEscape(const std::string& text);

}  // namespace forgek
