// libFuzzer target: the #include pre-check of candidate sources (compile/include_check.h). Beyond
// not crashing, a refused include appended after any input free of block comments and trailing
// splices must still be found, on its own line: no input may leave the scan in a state that
// hides a later directive.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "compile/include_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  int lines = 1;
  for (char c : text) lines += c == '\n';
  for (const forgek::CompileMessage& m : forgek::CheckIncludes(text, "fuzz.cu"))
    if (m.line < 1 || m.line > lines || m.file != "fuzz.cu" || m.message.empty()) std::abort();

  auto ends_with = [&](const std::string& tail) {
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (text.find("/*") != std::string::npos || ends_with("\\") || ends_with("\\\r")) return 0;
  std::string planted = text + "\n#include \"/etc/passwd\"\n";
  bool found = false;
  for (const forgek::CompileMessage& m : forgek::CheckIncludes(planted, "fuzz.cu"))
    found = found || (m.line == lines + 1 && m.message.find("absolute path") != std::string::npos);
  if (!found) std::abort();
  return 0;
}
