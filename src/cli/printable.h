// Text from the store or an operator file made safe to print: no NUL to cut it, no ESC to drive the terminal.
#pragma once

#include <string>

namespace forgek::cli {

// `text` with every control character but tab and newline written as \0, \e or \xNN, so that a
// printf-style %s prints all of it and a terminal shows it as it is.
std::string Printable(const std::string& text);

// `word` as one word of a shell command a person can paste: as it is when it holds only letters,
// digits and - _ . , / : = + @ %; else in single quotes ('it'\''s'); with a control character
// (a newline, an ESC) in bash's $'...' form with escapes, so that nothing raw reaches the terminal.
std::string ShellQuote(const std::string& word);

}  // namespace forgek::cli
