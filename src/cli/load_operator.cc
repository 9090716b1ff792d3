// The operator a command names (by name or alias), loaded for the command or a Failure naming why not.
#include "cli/load_operator.h"

namespace forgek::cli {

OperatorSpec LoadOperatorOrFail(const Context& ctx, const std::string& name) {
  std::string dir, err;
  if (!ResolveOperator(OperatorsDir(ctx), name, &dir, &err)) throw Failure(err);
  OperatorSpec op;
  Diagnostics diags;
  if (!LoadOperator(dir, &op, &diags)) throw Failure(FormatDiagnostics(diags));
  return op;
}

}  // namespace forgek::cli
