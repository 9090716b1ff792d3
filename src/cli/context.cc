// Resolution of the shared locations named by the global options.
#include "context.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "forgek/core/paths.h"

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
  if (!ctx.store.empty()) return ctx.store;
  std::string path, err;
  if (!DefaultStorePath(&path, &err)) throw Failure("no place for the knowledge store: " + err);
  // Only the folder forgek chooses is checked: FORGEK_STORE (which DefaultStorePath honours too) is
  // the user's own choice, like --store.
  const char* chosen = std::getenv("FORGEK_STORE");
  if (!(chosen && *chosen) && !CheckPrivateDir(std::filesystem::path(path).parent_path().string(), &err))
    throw Failure("knowledge store " + path + ": " + err + " (or name a store with --store or FORGEK_STORE)");
  return path;
}

std::string CacheDir(const std::string& sub) {
  std::string dir, err;
  if (!DefaultCacheDir(&dir, &err)) throw Failure("no place for forgek's cache: " + err);
  if (!EnsurePrivateDir(dir, &err)) throw Failure("forgek's cache: " + err + " (or set XDG_CACHE_HOME)");
  if (sub.empty()) return dir;
  dir += "/" + sub;
  if (!EnsurePrivateDir(dir, &err)) throw Failure("forgek's cache: " + err + " (or set XDG_CACHE_HOME)");
  return dir;
}

bool ParseDuration(const std::string& text, double* seconds) {
  if (text.empty()) {
    *seconds = 0;
    return true;
  }
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v < 0) return false;
  std::string unit(end);
  if (unit.empty() || unit == "s") *seconds = v;
  else if (unit == "m") *seconds = v * 60;
  else if (unit == "h") *seconds = v * 3600;
  else return false;
  return true;
}

}  // namespace forgek::cli
