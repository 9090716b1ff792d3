// Tests of the NVRTC compile service on real compiles (NVRTC needs no GPU).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "compile/compile_cache.h"
#include "forgek/compile/compile.h"
#include "forgek/core/device_library.h"
#include "test_util.h"

namespace forgek {
namespace {

constexpr const char* kScaleKernel = R"(
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = tile[255 - threadIdx.x] * SCALE;
}
)";

constexpr const char* kBrokenKernel = R"(extern "C" __global__ void broken(float* y) {
  int i = threadIdx.x;

  y[i] = 2.f
  y[i + 1] = 3.f;
}
)";

// 64 live floats per thread under a 32-register cap (1024 threads, 2 blocks per SM) must spill.
constexpr const char* kSpillingKernel = R"(
extern "C" __global__ void __launch_bounds__(1024, 2) spill(const float* a, float* b, int n) {
  float v[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) v[k] = a[threadIdx.x + k * n];
  float s = 0;
#pragma unroll
  for (int k = 0; k < 64; ++k) s += v[k] * v[(k * 7) % 64];
#pragma unroll
  for (int k = 0; k < 64; ++k) b[threadIdx.x + k * n] = v[k] + s;
}
)";

// Exponentially many distinct instantiations: the front end works for seconds.
constexpr const char* kSlowKernel = R"(
template <int N, int M> struct Walk {
  static constexpr long long value = Walk<N - 1, 2 * M>::value + Walk<N - 1, 2 * M + 1>::value;
};
template <int M> struct Walk<0, M> { static constexpr long long value = M; };
extern "C" __global__ void slow(long long* out) { out[0] = Walk<13, 1>::value; }
)";

// Hopper-only PTX and the toolkit headers candidates use (bf16, libcu++ barrier, CUtensorMap).
constexpr const char* kHopperKernel = R"(
#include <cuda_bf16.h>
#include <cuda/barrier>
#include <cuda.h>
extern "C" __global__ void hopper(const __grid_constant__ CUtensorMap map, __nv_bfloat16* y) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  bar.arrive_and_wait();
  y[threadIdx.x] = __float2bfloat16(static_cast<float>(sizeof(map)));
}
)";

CompileRequest Request(const std::string& name, const std::string& source, std::vector<std::string> options = {}) {
  CompileRequest req;
  req.name = name;
  req.source = source;
  req.arch = "sm90";
  req.options = std::move(options);
  return req;
}

CompilerOptions Uncached() {
  CompilerOptions o;
  o.threads = 2;
  return o;
}

CompilerOptions CachedIn(const TempDir& dir) {
  CompilerOptions o = Uncached();
  o.cache_dir = dir.path();
  return o;
}

TEST(ArchTarget, MapsKnownArchitectures) {
  std::string t;
  ASSERT_TRUE(ArchToNvrtcTarget("sm90", &t));
  EXPECT_EQ(t, "sm_90a");
  ASSERT_TRUE(ArchToNvrtcTarget("sm100", &t));
  EXPECT_EQ(t, "sm_100a");
  EXPECT_FALSE(ArchToNvrtcTarget("sm_90", &t));
  EXPECT_FALSE(ArchToNvrtcTarget("", &t));
}

TEST(Compiler, NvrtcVersionIsMajorDotMinor) {
  std::string v = Compiler::NvrtcVersion();
  ASSERT_NE(v.find('.'), std::string::npos) << v;
  EXPECT_GE(std::stoi(v), 12) << v;
}

TEST(Compiler, SmallKernelBecomesAnElfCubinWithResources) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("scale.cu", kScaleKernel, {"-DSCALE=2.0f"}));
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF", 4));
  EXPECT_FALSE(r.cache_hit);
  EXPECT_EQ(r.key.size(), 64u);
  ASSERT_EQ(r.kernels.size(), 1u) << r.log;
  EXPECT_EQ(r.kernels[0].kernel, "scale");
  EXPECT_GT(r.kernels[0].registers, 0);
  EXPECT_EQ(r.kernels[0].static_smem_bytes, 1024);
  EXPECT_EQ(r.kernels[0].spill_store_bytes, 0);
  EXPECT_NE(r.Summary().find("scale: "), std::string::npos) << r.Summary();
}

TEST(Compiler, SyntaxErrorNamesTheLine) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("broken.cu", kBrokenKernel));
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.cubin.empty());
  ASSERT_FALSE(r.messages.empty()) << r.log;
  EXPECT_EQ(r.messages[0].file, "broken.cu");
  EXPECT_EQ(r.messages[0].line, 5) << r.log;  // the missing ';' is noticed on the next statement
  EXPECT_EQ(r.messages[0].severity, "error");
  EXPECT_NE(r.Summary().find("line 5: expected a \";\""), std::string::npos) << r.Summary();
}

// A kernel on the device library: every shipped header included (their expansion compiles together),
// and an error after the includes keeps the candidate's own line number.
TEST(Compiler, DeviceLibraryHeadersExpandAndKeepTheCandidatesLineNumbers) {
  std::string all;
  for (const DeviceHeader& h : ShippedDeviceLibrary()) all += "#include <" + h.name + ">\n";
  const std::string good = all + "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = fk::warp_sum(1.f); }\n";
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("lib.cu", good));
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.key, c.CompileNow(Request("lib.cu", ExpandedSource(good))).key)
      << "the source as written and its expansion are one compile";

  const int own_line = static_cast<int>(ShippedDeviceLibrary().size()) + 2;
  CompileResult bad = c.CompileNow(Request("lib.cu", all + "\nextern \"C\" __global__ void k(float* y) { y[0] = undeclared; }\n"));
  EXPECT_FALSE(bad.ok);
  ASSERT_FALSE(bad.messages.empty()) << bad.log;
  EXPECT_EQ(bad.messages[0].file, "lib.cu");
  EXPECT_EQ(bad.messages[0].line, own_line) << bad.log;
}

TEST(Compiler, AnUnknownDeviceLibraryHeaderIsALocatedError) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("lib.cu", "int a;\n#include <forgek/no_such.cuh>\n"));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].file, "lib.cu");
  EXPECT_EQ(r.messages[0].line, 2);
  EXPECT_NE(r.Summary().find("forgek's device library has no such header"), std::string::npos) << r.Summary();
}

TEST(Compiler, DefinesReachTheSource) {
  const std::string src = "#if VALUE != 7\n#error VALUE did not arrive\n#endif\n"
                          "extern \"C\" __global__ void k(int* y) { y[0] = VALUE; }\n";
  Compiler c(Uncached());
  EXPECT_TRUE(c.CompileNow(Request("d.cu", src, {"-DVALUE=7"})).ok);
  CompileResult wrong = c.CompileNow(Request("d.cu", src, {"-DVALUE=8"}));
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.Summary().find("line 2"), std::string::npos) << wrong.Summary();
}

TEST(Compiler, SpillsAreReported) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("spill.cu", kSpillingKernel));
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_EQ(r.kernels.size(), 1u) << r.log;
  EXPECT_GT(r.kernels[0].spill_store_bytes, 0) << r.log;
  EXPECT_GT(r.kernels[0].spill_load_bytes, 0) << r.log;
  EXPECT_LE(r.kernels[0].registers, 32) << r.log;
  EXPECT_NE(r.Summary().find("SPILLS"), std::string::npos) << r.Summary();
}

// A wgmma whose accumulators another instruction writes between two wgmmas of one stage: ptxas serialises
// the kernel's wgmmas (a performance loss it reports only as info), and forgek says so.
constexpr const char* kSerializedWgmmaKernel = R"(#include <forgek/wgmma.cuh>
extern "C" __global__ void serialized(float* out, unsigned long long da, unsigned long long db)
{
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  fk::wgmma_fence();
  fk::wgmma_m64k16_bf16<64, 0>(d, da, db, 1);
  d[0] = out[0];
  fk::wgmma_m64k16_bf16<64, 0>(d, da, db, 1);
  fk::wgmma_commit();
  fk::wgmma_wait<0>();
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}
)";

TEST(Compiler, SerializedWgmmasAreReported) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("serialized.cu", kSerializedWgmmaKernel));
  ASSERT_TRUE(r.ok) << r.Summary() << "\n" << r.log;
  ASSERT_EQ(r.kernels.size(), 1u) << r.log;
  EXPECT_EQ(r.kernels[0].wgmma_serialized.substr(0, 3), "C75") << r.log;
  EXPECT_NE(r.Summary().find("WGMMAS SERIALIZED"), std::string::npos) << r.Summary();
  CompileResult fine = c.CompileNow(Request("hopper.cu", kHopperKernel));
  ASSERT_TRUE(fine.ok) << fine.log;
  for (const KernelResources& k : fine.kernels) EXPECT_EQ(k.wgmma_serialized, "") << fine.log;
}

TEST(Compiler, HopperHeadersAndPtxCompileForSm90a) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("hopper.cu", kHopperKernel));
  ASSERT_TRUE(r.ok) << r.Summary() << "\n" << r.log;
  EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF", 4));
}

TEST(Compiler, APtxasRejectionKeepsItsReason) {
  // wgmma is sm90a only: on sm100a ptxas aborts, and the summary says why, not only "aborted".
  Compiler c(Uncached());
  CompileRequest req = Request("hopper.cu", kHopperKernel);
  req.arch = "sm100";
  CompileResult r = c.CompileNow(req);
  ASSERT_FALSE(r.ok);
  std::string summary = r.Summary();
  EXPECT_NE(summary.find("ptxas: PTX line "), std::string::npos) << summary << "\n" << r.log;
  EXPECT_NE(summary.find("wgmma"), std::string::npos) << summary << "\n" << r.log;
}

TEST(Compiler, UnknownArchIsAnErrorNotAThrow) {
  Compiler c(Uncached());
  CompileRequest req = Request("scale.cu", kScaleKernel);
  req.arch = "sm75";
  CompileResult r = c.Submit(req).get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.Summary().find("sm75"), std::string::npos) << r.Summary();
}

TEST(Compiler, BadOptionIsReported) {
  Compiler c(Uncached());
  CompileResult r = c.CompileNow(Request("scale.cu", kScaleKernel, {"--no-such-option"}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.Summary().find("--no-such-option"), std::string::npos) << r.Summary();
}

TEST(Compiler, TimeoutCancelsTheCompile) {
  TempDir cache;
  Compiler c(CachedIn(cache));
  CompileRequest req = Request("slow.cu", kSlowKernel);
  req.timeout_s = 0.05;
  CompileResult r = c.CompileNow(req);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_NE(r.Summary().find("compile exceeded 0.05s"), std::string::npos) << r.Summary();
  EXPECT_FALSE(std::filesystem::exists(CompileCache(cache.path()).EntryPath(r.key)))
      << "a timed-out compile must not be cached";
}

TEST(Compiler, ConcurrentSubmitsAllSucceed) {
  Compiler c(Uncached());
  std::vector<std::future<CompileResult>> futures;
  for (int i = 1; i <= 6; ++i)
    futures.push_back(c.Submit(Request("scale.cu", kScaleKernel, {"-DSCALE=" + std::to_string(i) + ".0f"})));
  std::set<std::string> keys;
  for (auto& f : futures) {
    CompileResult r = f.get();
    EXPECT_TRUE(r.ok) << r.Summary();
    keys.insert(r.key);
  }
  EXPECT_EQ(keys.size(), 6u) << "each -D value is a different compile";
}

TEST(Compiler, ShutdownAnswersEveryQueuedFuture) {
  std::vector<std::future<CompileResult>> futures;
  {
    CompilerOptions o;
    o.threads = 1;
    Compiler c(o);
    for (int i = 0; i < 3; ++i) futures.push_back(c.Submit(Request("slow.cu", kSlowKernel, {"-DI=" + std::to_string(i)})));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    CompileResult r = f.get();
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.timed_out);
    EXPECT_NE(r.Summary().find("shut down"), std::string::npos) << r.Summary();
  }
}

TEST(Compiler, BrokenPrecompiledHeaderNeverFailsTheCompile) {
  TempDir pch;
  // NVRTC looks for <program name>.pch in the folder first; give it garbage.
  WriteFile(pch.file("hopper.pch"), "this is not a precompiled header");
  CompilerOptions o = Uncached();
  o.pch_dir = pch.path();
  Compiler c(o);
  CompileResult r = c.CompileNow(Request("hopper.cu", kHopperKernel));
  EXPECT_TRUE(r.ok) << r.Summary() << "\n" << r.log;
}

TEST(Compiler, UnusablePchFolderNeverFailsTheCompile) {
  TempDir dir;
  WriteFile(dir.file("a-file"), "x");
  CompilerOptions o = Uncached();
  o.pch_dir = dir.file("a-file") + "/pch";  // cannot be created: its parent is a file
  Compiler c(o);
  EXPECT_TRUE(c.CompileNow(Request("scale.cu", kScaleKernel, {"-DSCALE=1.0f"})).ok);
}

// NVRTC keeps a precompiled header only where its probe of the driver succeeds (it deletes it
// otherwise). A compile child confined by Landlock cannot reach the driver's files, so precompiled
// headers are off there (docs/limits.md "Compiles"); compiles stay correct with a pch folder given.
TEST(GpuCompiler, PrecompiledHeadersSpeedUpTheNextCompile) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) GTEST_SKIP() << "no libcuda.so.1: NVRTC does not keep precompiled headers here";
  dlclose(driver);
  TempDir pch;
  CompilerOptions o = Uncached();
  o.pch_dir = pch.path();
  Compiler c(o);
  CompileResult first = c.CompileNow(Request("hopper.cu", kHopperKernel));
  ASSERT_TRUE(first.ok) << first.Summary();
  CompileResult second = c.CompileNow(Request("hopper.cu", std::string(kHopperKernel) + "// edited\n"));
  ASSERT_TRUE(second.ok) << second.Summary();
  std::printf("pch: first compile %.2f s, second %.2f s\n", first.seconds, second.seconds);
  if (CompileConfinementAbi() > 0)
    GTEST_SKIP() << "compiles are confined by Landlock here: NVRTC's driver probe fails inside the child, so it keeps "
                    "no precompiled header (a known cost of confinement; both compiles above succeeded)";
  EXPECT_FALSE(std::filesystem::is_empty(pch.path())) << "no precompiled header was written";
  EXPECT_LT(second.seconds, first.seconds) << "first " << first.seconds << " s, second " << second.seconds << " s";
}

}  // namespace
}  // namespace forgek
