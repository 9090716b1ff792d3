// The operator a command names (by name or alias), loaded for the command or a Failure naming why not.
#include "load_operator.h"

#include "forgek/core/suggest.h"
#include "forgek/core/torch_helper.h"

namespace forgek::cli {

namespace {

OperatorSpec Load(const std::string& dir) {
  OperatorSpec op;
  Diagnostics diags;
  if (!LoadOperator(dir, &op, &diags)) throw Failure(FormatDiagnostics(diags));
  return op;
}

}  // namespace

OperatorSpec LoadOperatorOrFail(const Context& ctx, const std::string& name) {
  std::string dir, err;
  if (!ResolveOperator(OperatorsDir(ctx), name, &dir, &err)) throw Failure(err);
  return Load(dir);
}

OperatorSpec LoadOperatorOption(const Context& ctx, const std::string& option, const std::string& name) {
  std::string dir, err;
  if (!ResolveOperator(OperatorsDir(ctx), name, &dir, &err)) throw UsageError(option + ": " + err);
  return Load(dir);
}

void CheckTorchGolden(const OperatorSpec& op) {
  TorchHelperPaths paths;
  std::string err;
  if (IsTorchGolden(op.golden) && !CheckTorchGoldenRuns(op.name, op.golden, &paths, &err)) throw Failure(err);
}

void CheckConfigNames(const OperatorSpec& op, const std::vector<std::string>& configs) {
  std::vector<std::string> known;
  for (const ConfigSpec& c : op.configs) known.push_back(c.name);
  for (const std::string& c : configs) {
    if (op.FindConfig(c)) continue;
    throw UsageError("--config: operator " + op.name + " has no config '" + c + "'" + DidYouMean(c, known) +
                     "; its configs: " + JoinShown(known));
  }
}

}  // namespace forgek::cli
