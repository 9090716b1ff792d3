// Lookup of shipped data folders and per-user locations.
#include "forgek/paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace forgek {
namespace fs = std::filesystem;

namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string HomeDir() { return EnvOr("HOME", "/tmp"); }

}  // namespace

bool IsReadableFile(const std::string& path, std::string* why) {
  std::error_code ec;
  fs::file_status link = fs::symlink_status(path, ec);
  if (!fs::exists(link)) {
    *why = "does not exist";
    return false;
  }
  fs::file_status target = fs::status(path, ec);
  if (ec == std::errc::too_many_symbolic_link_levels) {
    *why = "is a symbolic link loop, not a regular file";
    return false;
  }
  if (fs::is_symlink(link) && !fs::exists(target)) {
    *why = "is a link to a missing file (" + fs::read_symlink(path, ec).string() + ")";
    return false;
  }
  if (fs::is_regular_file(target)) return true;
  if (fs::is_directory(target)) *why = "is a folder, not a file";
  else if (fs::is_fifo(target)) *why = "is a FIFO, not a regular file";
  else if (fs::is_socket(target)) *why = "is a socket, not a regular file";
  else if (fs::is_block_file(target) || fs::is_character_file(target)) *why = "is a device, not a regular file";
  else *why = "is not a regular file";
  return false;
}

std::string SelfExecutablePath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string FindDataDir(const std::string& name, const char* env_var) {
  if (env_var) {
    const char* v = std::getenv(env_var);
    if (v && *v) return IsDir(v) ? std::string(v) : std::string();
  }
  if (IsDir(fs::path(name))) return fs::absolute(fs::path(name)).lexically_normal().string();
  std::string exe = SelfExecutablePath();
  if (!exe.empty()) {
    fs::path dir = fs::path(exe).parent_path();
    for (int up = 0; up < 4; ++up) {
      if (IsDir(dir / name)) return (dir / name).lexically_normal().string();
      dir = dir.parent_path();
    }
  }
#ifdef FORGEK_SOURCE_DIR
  fs::path src = fs::path(FORGEK_SOURCE_DIR) / name;
  if (IsDir(src)) return src.string();
#endif
  return std::string();
}

std::string DefaultStorePath() {
  const char* s = std::getenv("FORGEK_STORE");
  if (s && *s) return s;
  std::string base = EnvOr("XDG_DATA_HOME", HomeDir() + "/.local/share");
  return base + "/forgek/store.db";
}

std::string DefaultCacheDir() {
  std::string base = EnvOr("XDG_CACHE_HOME", HomeDir() + "/.cache");
  return base + "/forgek";
}

}  // namespace forgek
