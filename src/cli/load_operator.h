// The operator a command names (by name or alias), loaded for the command or a Failure naming why not.
#pragma once

#include <string>
#include <vector>

#include "context.h"
#include "forgek/core/operator_spec.h"

namespace forgek::cli {

// Resolves `name` in the operators folder and loads its operator.json; throws Failure with the
// close matches of an unknown name, or with the loader's diagnostics (file and field).
OperatorSpec LoadOperatorOrFail(const Context& ctx, const std::string& name);

// The same for the value of an option (`--op`): an unknown name is a usage error naming it.
OperatorSpec LoadOperatorOption(const Context& ctx, const std::string& option, const std::string& name);

// Throws Failure when the operator's golden is a PyTorch problem and python3 with torch is not
// there to run it (docs/importing.md): for the commands that run it, before a store or a GPU is touched.
void CheckTorchGolden(const OperatorSpec& op);

// Throws UsageError naming --config, the close matches and the known configs when one of
// `configs` is not a config of `op`.
void CheckConfigNames(const OperatorSpec& op, const std::vector<std::string>& configs);

}  // namespace forgek::cli
