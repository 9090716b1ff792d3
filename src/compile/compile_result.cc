// CompileResult::Summary: the few lines a person or an agent reads first.
#include <string>

#include "forgek/compile/compile.h"

namespace forgek {
namespace {

constexpr int kMaxErrorsShown = 5;

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// "line 12: message" for the candidate itself; a header the toolkit provides keeps its path.
std::string Locate(const CompileMessage& m) {
  if (m.line <= 0) return m.message;
  std::string where = (!m.file.empty() && m.file.front() == '/') ? m.file + " line " : "line ";
  return where + std::to_string(m.line) + ": " + FirstLine(m.message);
}

}  // namespace

std::string CompileResult::Summary() const {
  std::string out;
  if (ok) {
    for (const KernelResources& k : kernels) {
      if (!out.empty()) out += "\n";
      out += k.kernel + ": " + std::to_string(k.registers) + " registers, " + std::to_string(k.static_smem_bytes) +
             " B static smem, " + std::to_string(k.stack_bytes) + " B stack";
      if (k.spill_store_bytes > 0 || k.spill_load_bytes > 0)
        out += ", SPILLS " + std::to_string(k.spill_store_bytes) + " B stores / " +
               std::to_string(k.spill_load_bytes) + " B loads";
      if (!k.wgmma_serialized.empty()) out += ", WGMMAS SERIALIZED (ptxas " + k.wgmma_serialized + ")";
    }
    return out.empty() ? "compiled" : out;
  }
  int shown = 0, errors = 0;
  for (const CompileMessage& m : messages) {
    if (m.severity != "error") continue;
    ++errors;
    if (shown == kMaxErrorsShown) continue;
    if (!out.empty()) out += "\n";
    out += Locate(m);
    ++shown;
  }
  if (errors > shown) out += "\n(" + std::to_string(errors - shown) + " more errors)";
  return out.empty() ? "compile failed" : out;
}

}  // namespace forgek
