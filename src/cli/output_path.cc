// Output paths checked before the work that ends in writing them.
#include "output_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace forgek::cli {
namespace {

namespace fs = std::filesystem;

// What `st` is, for "is a FIFO, not a regular file"-style messages.
std::string KindText(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Whether a new file can be made in `dir`: permission bits say nothing to root (and a read-only
// file system says nothing in them), so a probe file is created and removed.
bool FolderTakesFiles(const fs::path& dir, std::string* why) {
  std::string probe = (dir / ".forgek-probe-XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

// The folder a path's file goes in: "." for a bare name.
fs::path FolderOf(const fs::path& p) {
  fs::path normal = p.lexically_normal();
  fs::path parent = normal.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

OutputProblem CheckOutputFile(const std::string& option, const std::string& path, std::string* why) {
  const std::string head = option + " " + path + ": ";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      *why = head + "it is " + KindText(st.st_mode) + "; name a file to write";
      return OutputProblem::usage;
    }
  } else if (errno != ENOENT) {
    *why = head + "cannot be examined: " + std::strerror(errno);
    return errno == ENOTDIR || errno == ELOOP || errno == ENAMETOOLONG ? OutputProblem::usage : OutputProblem::failure;
  }
  if (!path.empty() && path.back() == '/') {
    *why = head + "names a folder; name a file to write";
    return OutputProblem::usage;
  }
  const fs::path dir = FolderOf(path);
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    *why = head + "its folder " + dir.string() + " does not exist";
    return OutputProblem::usage;
  }
  if (!fs::is_directory(dir, ec)) {
    *why = head + dir.string() + " is not a folder";
    return OutputProblem::usage;
  }
  std::string cause;
  if (!FolderTakesFiles(dir, &cause)) {
    *why = head + "cannot write in its folder " + dir.string() + ": " + cause;
    return OutputProblem::failure;
  }
  return OutputProblem::ok;
}

OutputProblem CheckOutputFolder(const std::string& option, const std::string& path, std::string* why) {
  const std::string head = option + " " + path + ": ";
  std::error_code ec;
  fs::path dir = fs::path(path).lexically_normal();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    *why = head + "it is " + (S_ISREG(st.st_mode) ? std::string("a file") : KindText(st.st_mode)) + ", not a folder";
    return OutputProblem::usage;
  }
  // The nearest folder that exists: where create_directories will start.
  fs::path existing = dir;
  while (!fs::exists(existing, ec)) {
    fs::path up = existing.has_relative_path() ? existing.parent_path() : existing;
    if (up.empty()) up = ".";
    if (up == existing) break;
    existing = up;
  }
  if (!fs::is_directory(existing, ec)) {
    *why = head + existing.string() + " is not a folder";
    return OutputProblem::usage;
  }
  std::string cause;
  if (!FolderTakesFiles(existing, &cause)) {
    *why = head + "cannot write in " + existing.string() + ": " + cause;
    return OutputProblem::failure;
  }
  return OutputProblem::ok;
}

}  // namespace forgek::cli
