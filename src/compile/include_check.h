// The friendly first word on a candidate's #include lines. It is not what keeps files out of
// reach (the compile child's Landlock confinement is): it names the line before NVRTC runs.
#pragma once

#include <string>
#include <vector>

#include "forgek/compile/compile.h"

namespace forgek {

// Each #include (and #include_next, #import, #embed) of `source` must name its header literally
// (<name> or "name"), by a relative path without '..', '\' or control characters. Returns the
// refused lines as located errors in `name`; empty when every include is acceptable.
std::vector<CompileMessage> CheckIncludes(const std::string& source, const std::string& name);

}  // namespace forgek
