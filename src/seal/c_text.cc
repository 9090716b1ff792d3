// Text helpers of the C export: integer literals, comments, parameter names and message-building lines.
#include "c_text.h"

#include <cctype>
#include <cstdlib>
#include <set>

namespace forgek {

std::string CInt64Literal(int64_t v) { return v == kInt64Min ? "INT64_MIN" : "INT64_C(" + std::to_string(v) + ")"; }

std::string CommentText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\0';
    if ((c == '*' && next == '/') || (c == '/' && next == '*') || (c == '?' && next == '?')) {
      out += c;
      out += ' ';
    } else {
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

std::string CommentBlock(const std::string& text, size_t width) {
  std::string out, line;
  size_t pos = 0;
  const std::string clean = CommentText(text);
  while (pos < clean.size()) {
    size_t end = clean.find(' ', pos);
    if (end == std::string::npos) end = clean.size();
    const std::string word = clean.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += " * " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += " * " + line + "\n";
  return out;
}

std::string CParamName(const std::string& name) {
  static const std::set<std::string> kReserved = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "alignas",
      "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char8_t", "char16_t", "char32_t",
      "class", "compl", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return",
      "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "false", "friend", "mutable",
      "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this", "thread_local",
      "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq", "NULL", "EOF",
      "errno", "stdin", "stdout", "stderr", "assert", "offsetof",
      // The generated functions' own parameters and locals.
      "stream", "workspace", "workspace_bytes", "plan", "bytes", "status", "context", "current", "popped", "scratch",
      "pushed", "allocated", "functions", "r", "i", "l", "e", "id", "link"};
  const bool underscore_upper = name.size() > 1 && name[0] == '_' && (std::isupper(static_cast<unsigned char>(name[1])) || name[1] == '_');
  if (kReserved.count(name) || underscore_upper || name.rfind("fk_", 0) == 0 || name.rfind("v_", 0) == 0 ||
      name.rfind("FK_", 0) == 0 || name.rfind("INT", 0) == 0 || name.rfind("UINT", 0) == 0)
    return "arg_" + name;
  return name;
}

bool F32Literal(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

std::string AppendLines(const std::string& indent, const std::string& buffer,
                        const std::vector<CMessagePiece>& pieces) {
  std::string out;
  for (const CMessagePiece& p : pieces)
    out += indent + (p.integer ? "fk_append_int(" : "fk_append(") + buffer + ", sizeof " + buffer + ", " + p.expr +
           ");\n";
  return out;
}

}  // namespace forgek
