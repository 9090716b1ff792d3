// libFuzzer target: an operator.json (written to a scratch folder, then loaded as forgek loads it).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "forgek/core/operator_spec.h"

namespace {

const std::string& ScratchDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/forgek-fuzz-op-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (!made) std::abort();
    return std::string(made);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(ScratchDir() + "/operator.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  forgek::OperatorSpec op;
  forgek::Diagnostics diags;
  if (!forgek::LoadOperator(ScratchDir(), &op, &diags)) forgek::FormatDiagnostics(diags);
  return 0;
}
