// `forgek ops import kernelbench FILE.py` and `forgek ops import flashinfer DEF.json`: an operator
// folder from a KernelBench problem or a FlashInfer-Bench definition.
#pragma once

#include <CLI/CLI.hpp>

#include "context.h"

namespace forgek::cli {

// Adds `import` (with `kernelbench` and `flashinfer`) under `ops` (the ops command table calls it).
void AddOpsImportCommand(CLI::App* ops, Context& ctx);

}  // namespace forgek::cli
