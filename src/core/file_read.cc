// Reading an input file whole, with its kind and size taken from the opened descriptor first.
#include "forgek/core/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace forgek {
namespace {

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// "21474836480 bytes (20 GiB)"; "300 bytes" below a KiB.
std::string SizeText(uint64_t bytes) {
  return std::to_string(bytes) + " bytes" + (bytes >= 1024 ? " (" + BytesText(bytes) + ")" : "");
}

std::string TooLarge(uint64_t size, uint64_t max_bytes, const std::string& what) {
  return "it is " + SizeText(size) + "; " + what + " may be at most " + SizeText(max_bytes);
}

}  // namespace

std::string BytesText(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit + 1 < static_cast<int>(sizeof kUnits / sizeof kUnits[0])) v /= 1024, ++unit;
  char text[32];
  // A whole number of units is written without a fraction ("1 MiB", not "1.0 MiB").
  if (v == static_cast<double>(static_cast<uint64_t>(v))) std::snprintf(text, sizeof text, "%.0f %s", v, kUnits[unit]);
  else std::snprintf(text, sizeof text, "%.1f %s", v, kUnits[unit]);
  return text;
}

bool ReadFileLimited(const std::string& path, uint64_t max_bytes, const std::string& what, std::string* out,
                     std::string* why) {
  Fd f;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer for ever.
  do {
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (f.fd < 0 && errno == EINTR);
  if (f.fd < 0) {
    int e = errno;
    *why = e == ENOENT ? std::string("does not exist") : std::string("cannot be opened: ") + std::strerror(e);
    *why = "it " + *why;
    return false;
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    *why = std::string("it cannot be examined: ") + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "it " + KindOf(st.st_mode);
    return false;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    *why = TooLarge(size, max_bytes, what);
    return false;
  }
  // The size is a hint (files in /proc say 0): read until the end, but never past max_bytes + 1.
  std::string text;
  text.resize(static_cast<size_t>(size));
  size_t have = 0;
  while (true) {
    if (have == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes + 1, text.size() + 65536)));
    }
    ssize_t n = ::read(f.fd, &text[have], text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::string("it cannot be read: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (have > max_bytes) {  // it grew while it was read, or it is a file whose size says nothing
    *why = "it holds more than " + std::to_string(max_bytes) + " bytes; " + what + " may be at most " +
           SizeText(max_bytes);
    return false;
  }
  text.resize(have);
  *out = std::move(text);
  return true;
}

}  // namespace forgek
