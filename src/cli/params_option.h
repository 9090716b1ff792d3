// Command-line lists shared by the kernel commands: comma lists and `--params NAME=VALUE,...`.
#pragma once

#include <string>
#include <vector>

#include "forgek/core/candidate.h"

namespace forgek::cli {

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitCommas(const std::string& text);

// --params over a kernel's params: each given value must be in its domain; params not given need a
// single-valued domain. Throws UsageError naming `file` and the param otherwise.
ParamAssignment ChooseParams(const std::string& text, const CandidateManifest& m, const std::string& file);

}  // namespace forgek::cli
