// Lookup of shipped data folders and per-user locations.
#include "forgek/core/paths.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

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

// This user's home folder in the password database ("" when it has no entry or no home).
std::string PasswdHome() {
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  int rc;
  while ((rc = getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < (1u << 20))
    buf.resize(buf.size() * 2);
  return rc == 0 && found && found->pw_dir ? std::string(found->pw_dir) : std::string();
}

// "alice (uid 1000)", or "uid 1000" for a uid the password database does not know.
std::string UserText(uid_t uid) {
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_name)
    return std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

bool ChooseHomeDir(const char* env_home, const std::string& passwd_home, std::string* home, std::string* err) {
  if (env_home && *env_home) {
    *home = env_home;
    return true;
  }
  // A home that does not exist ("/nonexistent", the home of system users) is no place to create
  // forgek's folders in, root least of all.
  if (!passwd_home.empty() && passwd_home != "/" && IsDir(passwd_home)) {
    *home = passwd_home;
    return true;
  }
  *err = std::string("HOME is ") + (env_home ? "empty" : "not set") + " and this user (" + UserText(geteuid()) +
         ") has no home folder in the password database" +
         (passwd_home.empty() ? std::string() : " (" + passwd_home + " is not one)") +
         "; set HOME, or FORGEK_STORE (the knowledge store file), XDG_DATA_HOME and XDG_CACHE_HOME (the folders "
         "of forgek's data and compile cache) to places of this user";
  return false;
}

bool HomeDir(std::string* home, std::string* err) {
  return ChooseHomeDir(std::getenv("HOME"), PasswdHome(), home, err);
}

bool CreatePrivateDirs(const std::string& dir, std::string* err) {
  fs::path so_far;
  for (const fs::path& part : fs::path(dir)) {
    so_far /= part;
    if (part.empty() || part == "." || part == "/") continue;
    struct stat st;
    if (stat(so_far.c_str(), &st) == 0) continue;
    if (errno != ENOENT) {
      *err = "cannot reach " + so_far.string() + ": " + std::strerror(errno);
      return false;
    }
    if (mkdir(so_far.c_str(), 0700) != 0 && errno != EEXIST) {
      *err = "cannot create folder " + so_far.string() + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool CheckPrivateDir(const std::string& dir, std::string* err) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    *err = "cannot reach " + dir + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *err = dir + " is not a folder";
    return false;
  }
  if (st.st_uid != geteuid()) {
    *err = dir + " belongs to " + UserText(st.st_uid) + ", not to this user (" + UserText(geteuid()) +
           "): its owner could supply the kernels and incumbents forgek would trust; remove it, or choose "
           "another folder";
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    *err = dir + " is writable by " + std::string((st.st_mode & S_IWOTH) ? "every user" : "its group") +
           " (mode " + ModeText(st.st_mode) + "): another user could supply the kernels and incumbents forgek " +
           "would trust; run chmod go-w " + dir + ", or choose another folder";
    return false;
  }
  return true;
}

bool EnsurePrivateDir(const std::string& dir, std::string* err) {
  return CreatePrivateDirs(dir, err) && CheckPrivateDir(dir, err);
}

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

bool DefaultStorePath(std::string* path, std::string* err) {
  const char* s = std::getenv("FORGEK_STORE");
  if (s && *s) {
    *path = s;
    return true;
  }
  std::string base = EnvOr("XDG_DATA_HOME", "");
  if (base.empty()) {
    std::string home;
    if (!HomeDir(&home, err)) return false;
    base = home + "/.local/share";
  }
  *path = base + "/forgek/store.db";
  return true;
}

bool DefaultCacheDir(std::string* dir, std::string* err) {
  std::string base = EnvOr("XDG_CACHE_HOME", "");
  if (base.empty()) {
    std::string home;
    if (!HomeDir(&home, err)) return false;
    base = home + "/.cache";
  }
  *dir = base + "/forgek";
  return true;
}

}  // namespace forgek
