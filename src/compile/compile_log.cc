// Parsers for NVRTC's program log (front-end diagnostics and the ptxas -v report).
#include "compile_log.h"

#include <cstdlib>
#include <regex>
#include <sstream>
#include <utility>

namespace forgek {
namespace {

// std::regex recurses per character: a line longer than this is cut before any pattern sees it.
constexpr size_t kMaxLineBytes = 4096;

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kMaxLineBytes) line = line.substr(0, kMaxLineBytes) + " [...]";
    lines.push_back(line);
  }
  return lines;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A line holding only white space and one '^': the front end's pointer under the echoed source.
bool IsCaretLine(const std::string& line) {
  size_t caret = line.find('^');
  return caret != std::string::npos && line.find_first_not_of(" \t") == caret &&
         Trim(line.substr(caret + 1)).empty();
}

// The front end echoes the source line indented by two spaces and puts the caret under it.
int CaretColumn(const std::string& caret_line) {
  int index = static_cast<int>(caret_line.find('^'));
  return index >= 2 ? index - 2 + 1 : index + 1;
}

int ToInt(const std::string& digits) { return static_cast<int>(std::strtol(digits.c_str(), nullptr, 10)); }

}  // namespace

std::vector<CompileMessage> ParseCompileMessages(const std::string& log) {
  // "k.cu(5): error: ...", "k.cu(3): warning #177-D: ...", "k.cu(1): catastrophic error: ..."
  static const std::regex kFrontEnd(R"(^(.+)\((\d+)\): (catastrophic error|error|warning)(?: #[\w-]+)?: (.*)$)");
  static const std::regex kTool(R"(^(nvrtc|ptxas):? ?(error|fatal|warning) *: (.*)$)");
  // "ptxas application ptx input, line 45; error   : Instruction 'wgmma.fence' not supported on
  // .target 'sm_100a'": the reason behind "Ptx assembly aborted", at a line of the PTX (not the .cu).
  static const std::regex kPtxas(R"(^ptxas .*, line (\d+); (error|warning) *: (.*)$)");
  std::vector<CompileMessage> out;
  std::vector<std::string> lines = SplitLines(log);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, kPtxas)) {
      CompileMessage msg;
      msg.severity = m[2] == "warning" ? "warning" : "error";
      msg.message = "ptxas: PTX line " + m[1].str() + ": " + Trim(m[3]);
      out.push_back(std::move(msg));
      continue;
    }
    if (std::regex_match(lines[i], m, kTool)) {
      CompileMessage msg;
      msg.severity = m[2] == "warning" ? "warning" : "error";
      msg.message = m[1].str() + ": " + Trim(m[3]);
      out.push_back(std::move(msg));
      continue;
    }
    if (!std::regex_match(lines[i], m, kFrontEnd)) continue;
    CompileMessage msg;
    msg.file = m[1];
    msg.line = ToInt(m[2]);
    msg.severity = m[3] == "warning" ? "warning" : "error";
    msg.message = Trim(m[4]);
    // The block runs to the next blank line: detail lines, the echoed source, the caret line.
    size_t end = i + 1;
    while (end < lines.size() && !Trim(lines[end]).empty()) ++end;
    size_t caret = end;
    for (size_t j = i + 1; j < end; ++j)
      if (IsCaretLine(lines[j])) caret = j;
    for (size_t j = i + 1; j < end; ++j) {
      if (j == caret) {
        msg.column = CaretColumn(lines[j]);
      } else if (caret != end && j + 1 == caret) {
        continue;  // the echoed source line
      } else {
        msg.message += "\n" + Trim(lines[j]);
      }
    }
    out.push_back(std::move(msg));
    i = end > i ? end - 1 : i;
  }
  return out;
}

std::string QuoteOnlyOwnLines(const std::string& log, const std::string& name, size_t max_bytes) {
  static const std::regex kFrontEnd(R"(^(.+)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: .*$)");
  std::vector<std::string> lines = SplitLines(log);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    out += '\n';
    std::smatch m;
    if (!std::regex_match(lines[i], m, kFrontEnd) || m[1] == name) continue;
    // A message of another file: keep its detail lines, drop the line echoed above the caret.
    size_t end = i + 1;
    while (end < lines.size() && !Trim(lines[end]).empty()) ++end;
    for (size_t j = i + 1; j < end; ++j) {
      if (j + 1 < end && IsCaretLine(lines[j + 1])) continue;
      out += lines[j];
      out += '\n';
    }
    i = end - 1;
  }
  if (!log.empty() && log.back() != '\n' && !out.empty()) out.pop_back();
  if (out.size() > max_bytes) {
    out.resize(max_bytes);
    out += "\n[forgek: the rest of the compiler's log is left out]\n";
  }
  return out;
}

std::vector<KernelResources> ParsePtxasReport(const std::string& log) {
  static const std::regex kEntry(R"(ptxas info\s*: Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(ptxas info\s*: Function properties for (\S+))");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kUsed(R"(ptxas info\s*: Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[\d+\])");
  static const std::regex kSerialized(
      R"(\((C75\d\d)\)[^']*wgmma\.mma_async instructions are serialized[^']*function '([^']+)')");

  std::vector<KernelResources> kernels;
  std::vector<std::pair<std::string, std::string>> serialized;  // (kernel, ptxas code): wgmmas serialised
  KernelResources* entry = nullptr;   // the entry function ptxas is compiling now
  KernelResources* described = nullptr;  // the entry whose "Function properties" block is open
  for (const std::string& line : SplitLines(log)) {
    std::smatch m;
    if (std::regex_search(line, m, kSerialized)) {  // names its function; printed before or after its report
      serialized.emplace_back(m[2], m[1]);
    } else if (std::regex_search(line, m, kEntry)) {
      kernels.push_back(KernelResources{});
      kernels.back().kernel = m[1];
      entry = &kernels.back();
      described = nullptr;
    } else if (std::regex_search(line, m, kProperties)) {
      // Properties of a non-inlined device function are reported too; they belong to no entry.
      described = (entry && entry->kernel == m[1].str()) ? entry : nullptr;
    } else if (std::regex_search(line, m, kFrame)) {
      if (!described) continue;
      described->stack_bytes = ToInt(m[1]);
      described->spill_store_bytes = ToInt(m[2]);
      described->spill_load_bytes = ToInt(m[3]);
    } else if (std::regex_search(line, m, kUsed)) {
      if (!entry) continue;
      entry->registers = ToInt(m[1]);
      if (std::regex_search(line, m, kSmem)) entry->static_smem_bytes = ToInt(m[1]);
      int cmem = 0;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), kCmem); it != std::sregex_iterator(); ++it)
        cmem += ToInt((*it)[1]);
      entry->const_bytes = cmem;
    }
  }
  for (KernelResources& k : kernels)
    for (const auto& [kernel, code] : serialized)
      if (kernel == k.kernel) k.wgmma_serialized = code;
  return kernels;
}

}  // namespace forgek
