// End-to-end tests of hostile operator folders and manifests: a missing folder, an operator.json
// that is not a file, sizes beyond docs/limits.md, and kernels declared for another arch.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

CommandResult Forgek(const TempDir& dir, std::vector<std::string> args) {
  return RunForgek(args, {"XDG_CACHE_HOME=" + dir.file("cache"), "XDG_DATA_HOME=" + dir.file("xdg")});
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(OperatorsFolder, AMissingFolderIsAUsageErrorNamingIt) {
  TempDir dir;
  for (const char* cmd : {"list", "validate"}) {
    CommandResult r = Forgek(dir, {"--operators", "/nonexistent/forgek-ops", "ops", cmd});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--operators /nonexistent/forgek-ops: no such folder"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  WriteFile(dir.file("a-file"), "x");
  CommandResult r = Forgek(dir, {"--operators", dir.file("a-file"), "ops", "list"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a folder"), std::string::npos) << r.err;
}

TEST(OperatorsFolder, AnOperatorJsonThatIsNotAFileIsAnErrorNamingItAndNeverHangs) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  fs::create_directories(ops + "/as_folder/operator.json");
  fs::create_directories(ops + "/as_fifo");
  ASSERT_EQ(mkfifo((ops + "/as_fifo/operator.json").c_str(), 0644), 0);
  fs::create_directories(ops + "/as_dangling_link");
  fs::create_symlink(ops + "/nowhere.json", ops + "/as_dangling_link/operator.json");
  auto start = std::chrono::steady_clock::now();

  CommandResult r = Forgek(dir, {"--operators", ops, "ops", "list"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("tiny_scale"), std::string::npos) << "good operators are still listed: " << r.out;
  EXPECT_NE(r.err.find(ops + "/as_folder/operator.json: cannot read the operator definition: it is a folder"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(ops + "/as_fifo/operator.json: cannot read the operator definition: it is a FIFO"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(ops + "/as_dangling_link/operator.json: cannot read the operator definition: it is a link "
                             "to a missing file"),
            std::string::npos)
      << r.err;

  r = Forgek(dir, {"--operators", ops, "ops", "validate", "--no-compile"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const char* name : {"as_folder", "as_fifo", "as_dangling_link"})
    EXPECT_NE(r.out.find(std::string(name) + ": 1 problem"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_scale: ok"), std::string::npos) << r.out;

  // An unknown name makes forgek read every operator's aliases: the FIFO is not opened.
  r = Forgek(dir, {"--operators", ops, "ops", "show", "no_such_op"});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // a name that means nothing: a usage error
  EXPECT_NE(r.err.find("unknown operator 'no_such_op'"), std::string::npos) << r.err;
  EXPECT_LT(SecondsSince(start), 60) << "nothing waits on the FIFO";
}

// Replaces `from` by `to` in a file of the copied operator.
void Edit(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = ReadFile(path);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " in " << path;
  WriteFile(path, text.replace(at, from.size(), to));
}

TEST(OperatorsFolder, SharedMemoryBeyondTheOptInLimitFailsValidation) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  Edit(ops + "/tiny_scale/seed.cu", R"("block": ["THREADS"],)", R"("block": ["THREADS"], "smem": 1073741824,)");
  CommandResult r = Forgek(dir, {"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(ops + "/tiny_scale/seed.cu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("launches[0].smem"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1073741824 bytes of dynamic shared memory exceed the 232448"), std::string::npos) << r.err;

  // A family's first instance is resolved too.
  ops = CopyTinyScale(dir.file("ops2"));
  Edit(ops + "/tiny_scale/families/vectorised.cu", R"("block": ["THREADS"],)",
       R"("block": ["THREADS"], "smem": "THREADS * 4096",)");
  r = Forgek(dir, {"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("families/vectorised.cu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("launches[0].smem"), std::string::npos) << r.err;
}

TEST(OperatorsFolder, ManifestsBeyondTheLimitsAreRejectedFastWithShortMessages) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  std::string seed = ops + "/tiny_scale/seed.cu";
  std::string original = ReadFile(seed);
  std::string launch = R"J({"kernel": "scale_seed", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"],
                 "args": ["x", "y", "alpha", "N"]})J";
  struct Case {
    const char* what;
    std::string from, to;
    const char* says;
  };
  std::string launches, domain, expression = "1";
  for (int i = 0; i < 5000; ++i) launches += (i ? ", " : "") + launch;
  // As many values as a source of at most 1 MiB holds (a larger source is refused from its size).
  for (int i = 0; i < 150000; ++i) domain += (i ? "," : "") + std::to_string(i);
  for (int i = 0; i < 200000; ++i) expression += "+1";
  const Case cases[] = {
      {"5000 launches", launch, launches, "5000 launches; a candidate may make at most 64"},
      {"a domain of 150 000 values", R"("THREADS": 128)", R"("THREADS": 128, "D": [)" + domain + "]",
       "a domain of 150000 values; at most 1024"},
      {"a source of 2 MiB", "*/", "*/\n// " + std::string(2 << 20, 'x') + "\n",
       "a candidate's source may be at most 1048576 bytes (1 MiB)"},
      {"a 400 001-character expression", R"J("ceil_div(N, THREADS)")J", "\"" + expression + "\"",
       "an expression of 400001 characters; at most 4096"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    WriteFile(seed, original);
    Edit(seed, c.from, c.to);
    auto start = std::chrono::steady_clock::now();
    CommandResult r = Forgek(dir, {"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"});
    EXPECT_LT(SecondsSince(start), 20);
    EXPECT_EQ(r.exit_code, 1) << r.err.substr(0, 2000);
    EXPECT_NE(r.err.find(seed), std::string::npos) << r.err.substr(0, 2000);
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err.substr(0, 2000);
    EXPECT_LT(r.err.size(), 5000u) << "the input is not echoed whole";
  }
}

// A tiny_scale family that only compiles for sm90, as a wgmma kernel would.
constexpr const char* kSm90Family = R"CU(/* forgek
{ "name": "scale_sm90", "archs": ["sm90"], "params": {"VEC": [4, 2]},
  "launches": [ {"kernel": "scale_vec", "grid": ["ceil_div(N, 128 * VEC)"], "block": [128],
                 "args": ["x", "y", "alpha", "N"]} ] }
*/
#if __CUDA_ARCH__ != 900
#error "this family is written for sm90 only"
#endif
extern "C" __global__ void scale_vec(const float* x, float* y, float alpha, int n) {
  int base = (blockIdx.x * 128 + threadIdx.x) * VEC;
  for (int v = 0; v < VEC && base + v < n; ++v) y[base + v] = alpha * x[base + v];
}
)CU";

TEST(OperatorsFolder, AFamilyForAnotherArchIsSkippedWithANote) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  WriteFile(ops + "/tiny_scale/families/vectorised.cu", kSm90Family);
  CommandResult r = Forgek(dir, {"--operators", ops, "--arch", "sm100", "ops", "validate", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("families[0] is for sm90, not sm100: not compiled"), std::string::npos) << r.err;
  r = Forgek(dir, {"--operators", ops, "--arch", "sm90", "ops", "validate", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 0) << "on its own arch it compiles: " << r.err;

  r = Forgek(dir, {"--operators", ops, "--store", dir.file("store.db"), "--arch", "sm100", "run", "--op",
                   "tiny_scale", "--compile-only", "--iterations", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("family families/vectorised.cu skipped: it is for sm90, not sm100"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("this family is written for sm90 only"), std::string::npos) << "never compiled: " << r.err;

  // Undeclared, the same family fails on sm100 with the compiler's reason.
  std::string text = kSm90Family;
  text.replace(text.find(R"("archs": ["sm90"], )"), 19, "");
  WriteFile(ops + "/tiny_scale/families/vectorised.cu", text);
  r = Forgek(dir, {"--operators", ops, "--arch", "sm100", "ops", "validate", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("this family is written for sm90 only"), std::string::npos) << r.err;
}

TEST(OperatorsFolder, AnUnknownArchInAManifestIsALocatedError) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  Edit(ops + "/tiny_scale/families/vectorised.cu", R"("name": "scale_vectorised",)",
       R"("name": "scale_vectorised", "archs": ["sm80"],)");
  CommandResult r = Forgek(dir, {"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("families/vectorised.cu:2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("archs[0]: unknown arch 'sm80'; one of sm90, sm100"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace forgek
