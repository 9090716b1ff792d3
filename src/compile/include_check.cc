// The #include pre-check: each including directive names a relative header literally.
#include "include_check.h"

#include "forgek/core/directives.h"

namespace forgek {
namespace {

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
  std::vector<CompileMessage> out;
  for (const IncludeDirective& d : IncludeDirectives(source)) {
    if (!d.literal) {
      out.push_back(Refusal(name, d.line, d.column,
                            "#" + d.directive + " must name its header literally, as <name> or \"name\" (a name "
                            "made by a macro is refused)"));
      continue;
    }
    std::string why = RefuseName(d.header);
    if (why.empty()) continue;
    const char close = d.open == '<' ? '>' : '"';
    std::string shown = d.header.size() > 80 ? d.header.substr(0, 80) + "..." : d.header;
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    out.push_back(Refusal(name, d.line, d.column, "#" + d.directive + " " + d.open + shown + close + " " + why));
  }
  return out;
}

}  // namespace forgek
