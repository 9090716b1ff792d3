// Input files are judged by their size before they are read: a 20 GiB file (sparse here, so it
// costs no disk) is refused at once with its size and the limit, instead of std::bad_alloc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>

#include "forgek/core/file_read.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/spec_limits.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

constexpr off_t k20GiB = off_t{20} << 30;

// A file of `size` bytes that holds no disk blocks.
void MakeSparse(const std::string& path, off_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, size), 0) << path;
  ::close(fd);
}

// Processor time: reading 20 GiB costs seconds of it, fstat none, however loaded the machine is.
double CpuSecondsSince(std::clock_t t) { return static_cast<double>(std::clock() - t) / CLOCKS_PER_SEC; }

TEST(FileLimits, AHugeCandidateFileIsRefusedFromItsSize) {
  TempDir dir;
  const std::string path = dir.file("huge.cu");
  MakeSparse(path, k20GiB);
  Candidate c;
  Diagnostics diags;
  const std::clock_t start = std::clock();
  EXPECT_FALSE(LoadCandidateFile(path, &c, &diags));
  EXPECT_LT(CpuSecondsSince(start), 1.0) << "nothing is read";
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, path);
  EXPECT_NE(diags[0].message.find("21474836480 bytes (20 GiB)"), std::string::npos) << diags[0].message;
  EXPECT_NE(diags[0].message.find("a candidate's source may be at most 1048576 bytes (1 MiB)"), std::string::npos)
      << diags[0].message;
}

TEST(FileLimits, ACandidateFileJustOverTheLimitIsRefusedAndOneAtItIsRead) {
  TempDir dir;
  const std::string head = "/* forgek\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], "
                           "\"args\": [\"y\"]}]}\n*/\nextern \"C\" __global__ void k(float* y) {}\n// ";
  std::string at_limit = head + std::string(kMaxCandidateSourceBytes - head.size() - 1, 'x') + "\n";
  ASSERT_EQ(at_limit.size(), kMaxCandidateSourceBytes);
  WriteFile(dir.file("at.cu"), at_limit);
  WriteFile(dir.file("over.cu"), at_limit + "\n");
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(LoadCandidateFile(dir.file("at.cu"), &c, &diags)) << FormatDiagnostics(diags);
  diags.clear();
  EXPECT_FALSE(LoadCandidateFile(dir.file("over.cu"), &c, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, dir.file("over.cu"));
  EXPECT_NE(diags[0].message.find("1048577 bytes"), std::string::npos) << diags[0].message;
  EXPECT_NE(diags[0].message.find("at most 1048576 bytes (1 MiB)"), std::string::npos) << diags[0].message;
}

TEST(FileLimits, AHugeOperatorJsonIsRefusedFromItsSize) {
  TempDir dir;
  fs::create_directories(dir.file("op"));
  MakeSparse(dir.file("op/operator.json"), k20GiB);
  OperatorSpec op;
  Diagnostics diags;
  const std::clock_t start = std::clock();
  EXPECT_FALSE(LoadOperator(dir.file("op"), &op, &diags));
  EXPECT_LT(CpuSecondsSince(start), 1.0) << "nothing is read";
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, dir.file("op/operator.json"));
  EXPECT_NE(diags[0].message.find("21474836480 bytes (20 GiB)"), std::string::npos) << diags[0].message;
  EXPECT_NE(diags[0].message.find("at most 67108864 bytes (64 MiB)"), std::string::npos) << diags[0].message;
  // Resolving a name reads every operator.json for aliases: a huge one is passed over, not read.
  std::string found, err;
  EXPECT_FALSE(ResolveOperator(dir.path(), "nope", &found, &err));
  EXPECT_NE(err.find("unknown operator 'nope'"), std::string::npos) << err;
}

TEST(FileLimits, ReadFileLimitedReadsWholeFilesAndSaysWhatElseItFound) {
  TempDir dir;
  WriteFile(dir.file("small.txt"), "hello");
  std::string text, why;
  ASSERT_TRUE(ReadFileLimited(dir.file("small.txt"), 5, "a test file", &text, &why)) << why;
  EXPECT_EQ(text, "hello");
  EXPECT_FALSE(ReadFileLimited(dir.file("small.txt"), 4, "a test file", &text, &why));
  EXPECT_EQ(why, "it is 5 bytes; a test file may be at most 4 bytes");
  EXPECT_FALSE(ReadFileLimited(dir.file("missing.txt"), 4, "a test file", &text, &why));
  EXPECT_EQ(why, "it does not exist");
  EXPECT_FALSE(ReadFileLimited(dir.path(), 4, "a test file", &text, &why));
  EXPECT_EQ(why, "it is a folder, not a file");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(ReadFileLimited(dir.file("fifo"), 4, "a test file", &text, &why));  // no writer: must not wait
  EXPECT_EQ(why, "it is a FIFO, not a regular file");
  // A file whose size says nothing (procfs says 0) is read up to the limit and no further.
  EXPECT_TRUE(ReadFileLimited("/proc/self/status", 1 << 20, "a test file", &text, &why)) << why;
  EXPECT_NE(text.find("Name:"), std::string::npos);
  EXPECT_FALSE(ReadFileLimited("/proc/self/status", 10, "a test file", &text, &why));
  EXPECT_EQ(why, "it holds more than 10 bytes; a test file may be at most 10 bytes");
}

TEST(FileLimits, BytesAreShownInTheLargestWholeUnit) {
  EXPECT_EQ(BytesText(1), "1 byte");
  EXPECT_EQ(BytesText(1023), "1023 bytes");
  EXPECT_EQ(BytesText(1536), "1.5 KiB");
  EXPECT_EQ(BytesText(size_t{1} << 20), "1 MiB");
  EXPECT_EQ(BytesText(uint64_t{20} << 30), "20 GiB");
}

}  // namespace
}  // namespace forgek
