// Atomic replacement of output files: temporary file in the same folder, fsync, rename.
#include "forgek/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace forgek {
namespace fs = std::filesystem;

namespace {

bool Fail(const std::string& what, const std::string& path, int error, std::string* err) {
  *err = "cannot write " + path + ": " + what + ": " + std::strerror(error) + " (the file is unchanged)";
  return false;
}

bool WriteAll(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool WriteFileAtomic(const std::string& path, std::string_view content, std::string* err) {
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return Fail("cannot create a temporary file in " + dir.string(), path, errno, err);
  struct stat st;
  mode_t mode = 0644;
  if (::stat(path.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  auto abandon = [&](const std::string& what) {
    int error = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    return Fail(what, path, error, err);
  };
  if (::fchmod(fd, mode) != 0) return abandon("cannot set permissions");
  if (!WriteAll(fd, content)) return abandon("write failed");
  if (::fsync(fd) != 0) return abandon("fsync failed");
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(tmpl.c_str());
    return Fail("close failed", path, error, err);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(tmpl.c_str());
    return Fail("cannot rename the temporary file over it", path, error, err);
  }
  // The rename is durable once the folder is on disk too; a failure here loses nothing written.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace forgek
