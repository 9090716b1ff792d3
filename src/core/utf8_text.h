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

}  // namespace forgek
