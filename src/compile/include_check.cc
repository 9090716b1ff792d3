// A small preprocessor-shaped scan: line splices joined, comments dropped, directives read.
#include "compile/include_check.h"

#include <cstddef>

namespace forgek {
namespace {

struct LogicalLine {
  std::string text;  // with splices joined and comments replaced by one space
  int line = 0;      // the physical line it starts on (1-based)
};

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
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\\' && i + 1 < src.size() && (src[i + 1] == '\n' || (src[i + 1] == '\r' && i + 2 < src.size() && src[i + 2] == '\n'))) {
      i += src[i + 1] == '\r' ? 2 : 1;
      ++physical;
      continue;
    }
    if (c == '\n') {
      ++physical;
      if (in_block_comment) continue;
      quote = 0;  // an unterminated literal ends with its line
      lines.push_back(std::move(cur));
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
  lines.push_back(std::move(cur));
  return lines;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

size_t SkipSpace(const std::string& s, size_t at) {
  while (at < s.size() && IsSpace(s[at])) ++at;
  return at;
}

// Why a header name may not be used, or "" when it may.
std::string RefuseName(const std::string& header) {
  if (header.empty()) return "names no header";
  if (header.front() == '/') return "names an absolute path";
  for (unsigned char c : header)
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  if (header.find('\\') != std::string::npos) return "holds a backslash";
  size_t start = 0;
  while (start <= header.size()) {
    size_t slash = header.find('/', start);
    if (slash == std::string::npos) slash = header.size();
    if (header.compare(start, slash - start, "..") == 0 && slash - start == 2) return "climbs out with '..'";
    start = slash + 1;
  }
  return "";
}

CompileMessage Refusal(const std::string& name, int line, int column, const std::string& what) {
  CompileMessage m;
  m.file = name;
  m.line = line;
  m.column = column;
  m.severity = "error";
  m.message = what +
              ": a candidate may include only the CUDA toolkit's headers and forgek's device library, "
              "by a relative name such as <cuda_bf16.h>";
  return m;
}

}  // namespace

std::vector<CompileMessage> CheckIncludes(const std::string& source, const std::string& name) {
  static const char* const kIncluding[] = {"include", "include_next", "import", "embed"};
  std::vector<CompileMessage> out;
  for (const LogicalLine& l : LogicalLines(source)) {
    size_t hash = SkipSpace(l.text, 0);
    if (hash >= l.text.size() || l.text[hash] != '#') continue;
    size_t word = SkipSpace(l.text, hash + 1);
    size_t word_end = word;
    while (word_end < l.text.size() && IsIdentChar(l.text[word_end])) ++word_end;
    std::string directive = l.text.substr(word, word_end - word);
    bool including = false;
    for (const char* d : kIncluding) including = including || directive == d;
    if (!including) continue;
    const int column = static_cast<int>(hash) + 1;
    size_t at = SkipSpace(l.text, word_end);
    char open = at < l.text.size() ? l.text[at] : '\0';
    char close = open == '<' ? '>' : open == '"' ? '"' : '\0';
    size_t end = close ? l.text.find(close, at + 1) : std::string::npos;
    if (end == std::string::npos) {
      out.push_back(Refusal(name, l.line, column,
                            "#" + directive + " must name its header literally, as <name> or \"name\" (a name "
                            "made by a macro is refused)"));
      continue;
    }
    std::string header = l.text.substr(at + 1, end - at - 1);
    std::string why = RefuseName(header);
    if (!why.empty()) {
      std::string shown = header.size() > 80 ? header.substr(0, 80) + "..." : header;
      for (char& c : shown)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      out.push_back(Refusal(name, l.line, column, "#" + directive + " " + open + shown + close + " " + why));
    }
  }
  return out;
}

}  // namespace forgek
