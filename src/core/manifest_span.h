// Where a candidate's manifest JSON sits inside its .cu file.
#pragma once

#include <cstddef>
#include <string>

#include "forgek/core/diagnostic.h"

namespace forgek {

struct ManifestSpan {
  size_t comment = 0;  // offset of the opening "/*"
  size_t begin = 0;    // first byte after the "forgek" keyword: the JSON starts here
  size_t end = 0;      // offset of the closing "*/"
};

// Finds the first /* forgek ... */ comment of `source`; false with a diagnostic naming `file` when
// there is none or it is never closed.
bool FindManifest(const std::string& file, const std::string& source, ManifestSpan* span, Diagnostics* diags);

}  // namespace forgek
