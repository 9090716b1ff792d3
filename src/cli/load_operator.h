// The operator a command names (by name or alias), loaded for the command or a Failure naming why not.
#pragma once

#include <string>

#include "cli/context.h"
#include "forgek/operator_spec.h"

namespace forgek::cli {

// Resolves `name` in the operators folder and loads its operator.json; throws Failure with the
// close matches of an unknown name, or with the loader's diagnostics (file and field).
OperatorSpec LoadOperatorOrFail(const Context& ctx, const std::string& name);

}  // namespace forgek::cli
