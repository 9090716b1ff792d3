// Resolution of the shared locations named by the global options.
#include "cli/context.h"

#include <filesystem>

#include "forgek/paths.h"

namespace forgek::cli {

std::string OperatorsDir(const Context& ctx) {
  if (!ctx.operators_dir.empty()) {
    std::error_code ec;
    auto status = std::filesystem::status(ctx.operators_dir, ec);
    if (!std::filesystem::exists(status))
      throw UsageError("--operators " + ctx.operators_dir + ": no such folder");
    if (!std::filesystem::is_directory(status))
      throw UsageError("--operators " + ctx.operators_dir + ": not a folder");
    return ctx.operators_dir;
  }
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
