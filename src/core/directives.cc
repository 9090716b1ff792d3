// A small preprocessor-shaped scan: line splices joined, comments dropped, directives read.
#include "forgek/core/directives.h"

#include <cstddef>

namespace forgek {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

size_t SkipSpace(const std::string& s, size_t at) {
  while (at < s.size() && IsSpace(s[at])) ++at;
  return at;
}

}  // namespace

// Translation phases 2 and 3, as far as directives need them: backslash-newline joins lines,
// comments become a space, string and character literals are kept whole (a "//" in a header name
// is no comment).
std::vector<LogicalLine> LogicalLines(const std::string& src) {
  std::vector<LogicalLine> lines;
  LogicalLine cur;
  cur.line = 1;
  int physical = 1;
  bool in_block_comment = false;
  char quote = 0;  // inside a literal opened by this character
  auto finish = [&] {
    cur.end_line = physical;
    lines.push_back(std::move(cur));
  };
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\\' && i + 1 < src.size() && (src[i + 1] == '\n' || (src[i + 1] == '\r' && i + 2 < src.size() && src[i + 2] == '\n'))) {
      i += src[i + 1] == '\r' ? 2 : 1;
      ++physical;
      continue;
    }
    if (c == '\n') {
      if (in_block_comment) {
        ++physical;
        continue;
      }
      quote = 0;  // an unterminated literal ends with its line
      finish();
      ++physical;
      cur = LogicalLine{};
      cur.line = physical;
      continue;
    }
    if (in_block_comment) {
      if (c == '*' && i + 1 < src.size() && src[i + 1] == '/') {
        in_block_comment = false;
        ++i;
        cur.text += ' ';
      }
      continue;
    }
    if (quote) {
      cur.text += c;
      if (c == '\\' && i + 1 < src.size() && src[i + 1] != '\n') cur.text += src[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      // A line comment runs to the end of the logical line (splices included).
      while (i + 1 < src.size() && src[i + 1] != '\n') {
        if (src[i + 1] == '\\' && i + 2 < src.size() && src[i + 2] == '\n') {
          i += 2;
          ++physical;
        } else {
          ++i;
        }
      }
      cur.text += ' ';
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      in_block_comment = true;
      ++i;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    cur.text += c;
  }
  finish();
  return lines;
}

std::vector<IncludeDirective> IncludeDirectives(const std::string& source) {
  static const char* const kIncluding[] = {"include", "include_next", "import", "embed"};
  std::vector<IncludeDirective> out;
  for (const LogicalLine& l : LogicalLines(source)) {
    size_t hash = SkipSpace(l.text, 0);
    if (hash >= l.text.size() || l.text[hash] != '#') continue;
    size_t word = SkipSpace(l.text, hash + 1);
    size_t word_end = word;
    while (word_end < l.text.size() && IsIdentChar(l.text[word_end])) ++word_end;
    IncludeDirective d;
    d.directive = l.text.substr(word, word_end - word);
    bool including = false;
    for (const char* name : kIncluding) including = including || d.directive == name;
    if (!including) continue;
    d.line = l.line;
    d.end_line = l.end_line;
    d.column = static_cast<int>(hash) + 1;
    size_t at = SkipSpace(l.text, word_end);
    char open = at < l.text.size() ? l.text[at] : '\0';
    char close = open == '<' ? '>' : open == '"' ? '"' : '\0';
    size_t end = close ? l.text.find(close, at + 1) : std::string::npos;
    if (end != std::string::npos) {
      d.literal = true;
      d.open = open;
      d.header = l.text.substr(at + 1, end - at - 1);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace forgek
