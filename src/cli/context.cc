// Resolution of the shared locations named by the global options.
#include "cli/context.h"

#include "forgek/paths.h"

namespace forgek::cli {

std::string OperatorsDir(const Context& ctx) {
  if (!ctx.operators_dir.empty()) return ctx.operators_dir;
  std::string dir = FindDataDir("operators", "FORGEK_OPERATORS");
  if (dir.empty())
    throw Failure("no operators folder found: pass --operators DIR or set FORGEK_OPERATORS "
                  "(searched ./operators, beside the executable and the source tree)");
  return dir;
}

std::string StorePath(const Context& ctx) {
  return ctx.store.empty() ? DefaultStorePath() : ctx.store;
}

}  // namespace forgek::cli
