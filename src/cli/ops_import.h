// `forgek ops import kernelbench FILE.py`: an operator folder from a KernelBench problem.
#pragma once

#include <CLI/CLI.hpp>

#include "context.h"

namespace forgek::cli {

// Adds `import` (with `kernelbench`) under `ops` (the ops command table calls it).
void AddOpsImportCommand(CLI::App* ops, Context& ctx);

}  // namespace forgek::cli
