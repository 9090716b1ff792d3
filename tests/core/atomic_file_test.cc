// Atomic output files: a failed write (here: the file-size limit, as a full disk would) leaves the old
// file whole and no temporary file behind.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "forgek/core/atomic_file.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Lowers the process's file-size limit for its lifetime: writes past `bytes` fail with EFBIG.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_signal_ = std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit lowered = previous_;
    lowered.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lowered);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }

 private:
  rlimit previous_{};
  void (*previous_signal_)(int) = nullptr;
};

TEST(AtomicFile, WritesAndReplaces) {
  TempDir dir;
  std::string path = dir.file("out.json");
  std::string err;
  ASSERT_TRUE(WriteFileAtomic(path, "first", &err)) << err;
  ASSERT_TRUE(WriteFileAtomic(path, "second, longer", &err)) << err;
  EXPECT_EQ(ReadFile(path), "second, longer");
  EXPECT_EQ(FilesIn(dir.path()), 1u);
}

TEST(AtomicFile, FailedWriteLeavesTheOldFileWhole) {
  TempDir dir;
  std::string path = dir.file("keep.json");
  std::string valid = "{\"valid\": true}\n";
  WriteFile(path, valid);
  std::string err;
  {
    FileSizeLimit limit(4096);
    EXPECT_FALSE(WriteFileAtomic(path, std::string(100000, 'x'), &err));
  }
  EXPECT_EQ(ReadFile(path), valid);
  EXPECT_EQ(FilesIn(dir.path()), 1u);  // the temporary file is gone
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("write failed"), std::string::npos) << err;
  EXPECT_NE(err.find("unchanged"), std::string::npos) << err;
}

TEST(AtomicFile, MissingFolderIsAnErrorNamingIt) {
  TempDir dir;
  std::string err;
  EXPECT_FALSE(WriteFileAtomic(dir.file("no/such/out.json"), "x", &err));
  EXPECT_NE(err.find(dir.file("no/such")), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
