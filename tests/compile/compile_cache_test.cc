// Tests of the on-disk compile cache: hits, keys, corrupt entries, failures that must not matter.
#include "compile/compile_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "forgek/compile/compile.h"
#include "test_util.h"

namespace forgek {
namespace {

constexpr const char* kKernel = R"(
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

CompileRequest Request(const std::string& source, std::vector<std::string> options = {}) {
  CompileRequest req;
  req.name = "axpy.cu";
  req.source = source;
  req.arch = "sm90";
  req.options = std::move(options);
  return req;
}

CompilerOptions CachedIn(const std::string& dir) {
  CompilerOptions o;
  o.cache_dir = dir;
  o.threads = 1;
  return o;
}

TEST(CompileKey, ChangesWithEveryInput) {
  std::string base = CompileKey("src", {"-DA=1", "-DB=2"}, "13.0", "sm_90a");
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, CompileKey("src", {"-DA=1", "-DB=2"}, "13.0", "sm_90a"));
  EXPECT_NE(base, CompileKey("src ", {"-DA=1", "-DB=2"}, "13.0", "sm_90a"));
  EXPECT_NE(base, CompileKey("src", {"-DA=1", "-DB=3"}, "13.0", "sm_90a"));
  EXPECT_NE(base, CompileKey("src", {"-DB=2", "-DA=1"}, "13.0", "sm_90a")) << "option order is kept";
  EXPECT_NE(base, CompileKey("src", {"-DA=1", "-DB=2"}, "13.1", "sm_90a"));
  EXPECT_NE(base, CompileKey("src", {"-DA=1", "-DB=2"}, "13.0", "sm_100a"));
  // Length prefixes keep field boundaries apart.
  EXPECT_NE(CompileKey("src", {"-DA=1"}, "13.0", "sm_90a"), CompileKey("src", {"-DA", "=1"}, "13.0", "sm_90a"));
}

TEST(CompileCache, SecondCompileIsAHitWithTheSameResult) {
  TempDir dir;
  Compiler c(CachedIn(dir.path()));
  CompileResult first = c.CompileNow(Request(kKernel));
  ASSERT_TRUE(first.ok) << first.Summary();
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(std::filesystem::exists(CompileCache(dir.path()).EntryPath(first.key)));

  CompileResult second = c.CompileNow(Request(kKernel));
  EXPECT_TRUE(second.cache_hit);
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.log, first.log);
  ASSERT_EQ(second.kernels.size(), 1u);
  EXPECT_EQ(second.kernels[0].kernel, "axpy");
  EXPECT_EQ(second.kernels[0].registers, first.kernels[0].registers);
}

TEST(CompileCache, SharedBetweenCompilerInstances) {
  TempDir dir;
  CompileResult first = Compiler(CachedIn(dir.path())).CompileNow(Request(kKernel));
  CompileResult again = Compiler(CachedIn(dir.path())).CompileNow(Request(kKernel));
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
}

TEST(CompileCache, KeyChangesWithOptionsAndSource) {
  TempDir dir;
  Compiler c(CachedIn(dir.path()));
  CompileResult base = c.CompileNow(Request(kKernel));
  CompileResult with_define = c.CompileNow(Request(kKernel, {"-DUNUSED=1"}));
  CompileResult edited = c.CompileNow(Request(std::string(kKernel) + "// edited\n"));
  EXPECT_FALSE(with_define.cache_hit);
  EXPECT_FALSE(edited.cache_hit);
  EXPECT_NE(with_define.key, base.key);
  EXPECT_NE(edited.key, base.key);
}

TEST(CompileCache, CompileErrorsAreCachedWithTheirMessages) {
  TempDir dir;
  Compiler c(CachedIn(dir.path()));
  std::string broken = "extern \"C\" __global__ void k(float* y) { y[0] = nope; }\n";
  CompileResult first = c.CompileNow(Request(broken));
  CompileResult second = c.CompileNow(Request(broken));
  EXPECT_FALSE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  ASSERT_FALSE(second.messages.empty());
  EXPECT_EQ(second.messages[0].line, 1);
  EXPECT_EQ(second.Summary(), first.Summary());
}

TEST(CompileCache, CorruptEntryIsIgnoredAndRewritten) {
  TempDir dir;
  Compiler c(CachedIn(dir.path()));
  CompileResult first = c.CompileNow(Request(kKernel));
  std::string path = CompileCache(dir.path()).EntryPath(first.key);
  std::string entry = ReadFile(path);

  for (const std::string& damaged : {std::string("garbage"), entry.substr(0, entry.size() / 2),
                                     entry.substr(0, entry.size() - 1) + "X", std::string()}) {
    WriteFile(path, damaged);
    CompileResult r = c.CompileNow(Request(kKernel));
    EXPECT_TRUE(r.ok);
    EXPECT_FALSE(r.cache_hit) << "a damaged entry of " << damaged.size() << " bytes was trusted";
    EXPECT_EQ(r.cubin, first.cubin);
    CompileResult reloaded;
    EXPECT_TRUE(CompileCache(dir.path()).Load(first.key, &reloaded)) << "the entry was not rewritten";
    EXPECT_EQ(reloaded.cubin, first.cubin);
  }
  EXPECT_TRUE(c.CompileNow(Request(kKernel)).cache_hit);
}

TEST(CompileCache, UnwritableCacheNeverFailsTheCompile) {
  TempDir dir;
  WriteFile(dir.file("not-a-folder"), "x");
  Compiler c(CachedIn(dir.file("not-a-folder")));
  CompileResult r = c.CompileNow(Request(kKernel));
  EXPECT_TRUE(r.ok) << r.Summary();
  EXPECT_FALSE(c.CompileNow(Request(kKernel)).cache_hit);
}

}  // namespace
}  // namespace forgek
