// libFuzzer target: a candidate source with its /* forgek {...} */ manifest.
#include <cstddef>
#include <cstdint>
#include <string>

#include "forgek/core/candidate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string source(reinterpret_cast<const char*>(data), size);
  forgek::Candidate candidate;
  forgek::Diagnostics diags;
  if (forgek::ParseCandidate("fuzz.cu", source, &candidate, &diags)) {
    candidate.manifest.IsFamily();
  } else {
    forgek::FormatDiagnostics(diags);
  }
  return 0;
}
