// The compile child: what a hostile candidate can make NVRTC do stays inside it. Files outside the
// toolkit cannot be read, the environment is not there to quote, crashes and runaway compiles are
// the candidate's compile errors, and forgek's signal handlers stay forgek's.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>

#include "compile/compile_child.h"
#include "compile/compile_wire.h"
#include "compile/landlock.h"
#include "forgek/compile/compile.h"
#include "forgek/compile/compile_worker.h"
#include "forgek/core/paths.h"
#include "test_util.h"

namespace forgek {
namespace {

constexpr const char* kCanary = "FORGEKCANARY7731";

// `#define S(...) #__VA_ARGS__` + `static_assert(false, S(` + an include + `))`: the front end
// quotes the included file whole in its error, so a readable file would come back in the log.
std::string QuotingInclude(const std::string& header) {
  return "#define S(...) #__VA_ARGS__\nstatic_assert(false, S(\n#include \"" + header +
         "\"\n));\nextern \"C\" __global__ void k() {}\n";
}

ChildLimits Limits() {
  ChildLimits l;
  l.command = {SelfExecutablePath(), kCompileWorkerCommand};
  l.read_folders = {FORGEK_CUDA_ROOT};
  l.timeout_s = 120;
  return l;
}

std::vector<std::string> Options() {
  std::string target;
  ArchToNvrtcTarget("sm90", &target);
  return {"--gpu-architecture=" + target, "-std=c++17", "-I" FORGEK_CUDA_ROOT "/include"};
}

// 2^depth terms from a source of a few hundred bytes: each macro doubles the one before it.
std::string ExpansionBomb(int depth) {
  std::string s = "#define E0 1\n";
  for (int i = 1; i <= depth; ++i)
    s += "#define E" + std::to_string(i) + " E" + std::to_string(i - 1) + "+E" + std::to_string(i - 1) + "\n";
  s += "extern \"C\" __global__ void bomb(long long* out) { out[0] = E" + std::to_string(depth) + "; }\n";
  return s;
}

// AddressSanitizer builds: no address-space limit, bigger frames, and SIGSEGV turned into its report.
bool SanitizerBuild() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

void SkipWithoutLandlock() {
  if (LandlockAbi() == 0) GTEST_SKIP() << "this kernel has no Landlock: the child cannot be confined here";
}

TEST(CompileWire, RequestAndReplyRoundTripAnyBytes) {
  ChildCompileRequest req;
  req.name = "k.cu";
  req.source = std::string("a\0b\n\xff\xfe 12 \n", 12);
  req.options = {"-DX=1", ""};
  req.read_folders = {"/usr/local/cuda"};
  req.write_folders = {"/tmp/pch dir"};
  req.address_space_bytes = 1ull << 33;
  req.cpu_seconds = 125;
  ChildCompileRequest back;
  std::string err;
  ASSERT_TRUE(DecodeRequest(EncodeRequest(req), &back, &err)) << err;
  EXPECT_EQ(back.source, req.source);
  EXPECT_EQ(back.options, req.options);
  EXPECT_EQ(back.write_folders, req.write_folders);
  EXPECT_EQ(back.address_space_bytes, req.address_space_bytes);
  EXPECT_EQ(back.cpu_seconds, 125u);

  ChildCompileReply reply;
  reply.run.cubin = std::string("\x7f" "ELF\0\0\n", 7);
  reply.run.log = "k.cu(1): error: x\n";
  reply.landlock_abi = 7;
  ChildCompileReply reply_back;
  ASSERT_TRUE(DecodeReply(EncodeReply(reply), &reply_back, &err)) << err;
  EXPECT_EQ(reply_back.run.cubin, reply.run.cubin);
  EXPECT_EQ(reply_back.run.log, reply.run.log);
  EXPECT_EQ(reply_back.landlock_abi, 7);
  EXPECT_TRUE(reply_back.run.ok);
}

TEST(CompileWire, CutOrForeignMessagesAreRefused) {
  ChildCompileRequest req;
  req.source = "extern \"C\" __global__ void k() {}";
  std::string bytes = EncodeRequest(req);
  ChildCompileRequest back;
  std::string err;
  EXPECT_FALSE(DecodeRequest(bytes.substr(0, bytes.size() - 3), &back, &err));
  EXPECT_NE(err.find("field 'stack'"), std::string::npos) << err;
  EXPECT_FALSE(DecodeRequest("GET / HTTP/1.1\n", &back, &err));
  EXPECT_FALSE(DecodeRequest(bytes + "option 99999999999999999999\n", &back, &err));
  ChildCompileReply reply;
  EXPECT_FALSE(DecodeReply(bytes, &reply, &err)) << "a request is no reply";
}

TEST(CompileChild, CompilesAKernelAndSaysItWasConfined) {
  SkipWithoutLandlock();
  ChildRun r = CompileInChild("k.cu", "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }", Options(),
                              Limits(), {});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  EXPECT_TRUE(r.run.ok) << r.run.log;
  EXPECT_FALSE(r.run.cubin.empty());
  EXPECT_GT(r.landlock_abi, 0);
}

// The bypass of any textual check: the child itself cannot open a file outside the toolkit.
TEST(CompileChild, AFileOutsideTheAllowedFoldersCannotBeRead) {
  SkipWithoutLandlock();
  TempDir dir;
  WriteFile(dir.file("secret.env"), std::string("OPENAI_API_KEY=") + kCanary + "\n");
  for (const std::string& header : {dir.file("secret.env"), std::string("/proc/self/environ"),
                                    std::string("/etc/passwd")}) {
    SCOPED_TRACE(header);
    ChildRun r = CompileInChild("evil.cu", QuotingInclude(header), Options(), Limits(), {});
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    EXPECT_FALSE(r.run.ok);
    EXPECT_NE(r.run.log.find("cannot open source file"), std::string::npos) << r.run.log;
    EXPECT_EQ(r.run.log.find(kCanary), std::string::npos) << r.run.log;
    EXPECT_EQ(r.run.log.find("root:"), std::string::npos) << r.run.log;
  }
}

// The child's environment holds no secret, even where confinement is allowed to be missing.
TEST(CompileChild, TheEnvironmentIsNotPassedOn) {
  setenv("OPENAI_API_KEY", kCanary, 1);
  for (const std::string& kv : CompileChildEnvironment()) EXPECT_EQ(kv.find(kCanary), std::string::npos) << kv;
  unsetenv("OPENAI_API_KEY");
}

// A 65,536-term expression (16 macros, 0.5 KB) whose tree the front end walks recursively: with
// the stack a compile-pool thread had, it overflows; the crash is the candidate's compile error.
TEST(CompileChild, AFrontEndCrashIsTheCandidatesCompileError) {
  ChildLimits l = Limits();
  l.allow_unconfined = true;
  l.timeout_s = 60;
  l.stack_bytes = 256u << 10;
  // Under AddressSanitizer the child's own SIGSEGV handler would turn the overflow into its report
  // and an exit 1, or not, by where in the binary's layout the overflow lands (one CI build did, the
  // next did not). The child keeps ASAN_OPTIONS: with that handler off it dies by the signal, as a
  // release build's child does, which is the crash this test is about.
  const char* asan_was = std::getenv("ASAN_OPTIONS");
  const std::string asan_kept = asan_was ? asan_was : "";
  if (SanitizerBuild()) setenv("ASAN_OPTIONS", (asan_kept + (asan_kept.empty() ? "" : ":") + "handle_segv=0").c_str(), 1);
  ChildRun r = CompileInChild("bomb.cu", ExpansionBomb(16), Options(), l, {});
  if (SanitizerBuild()) {
    if (asan_was) setenv("ASAN_OPTIONS", asan_kept.c_str(), 1);
    else unsetenv("ASAN_OPTIONS");
  }
  EXPECT_FALSE(r.run.ok);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.failure.find("the compiler crashed ("), std::string::npos) << r.failure;
  if (SanitizerBuild()) return;  // instrumented frames may need more than the default stack
  l.stack_bytes = 0;  // the main thread's own stack holds it
  EXPECT_TRUE(CompileInChild("bomb.cu", ExpansionBomb(16), Options(), l, {}).run.ok);
}

TEST(CompileChild, TheWallDeadlineHoldsDuringPreprocessing) {
  ChildLimits l = Limits();
  l.allow_unconfined = true;
  l.timeout_s = 2;
  auto start = std::chrono::steady_clock::now();
  ChildRun r = CompileInChild("bomb.cu", ExpansionBomb(24), Options(), l, {});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out) << r.failure << r.run.log;
  EXPECT_LT(seconds, 15.0);
}

// An address-space limit too small for NVRTC: the compile fails and says why; it neither succeeds
// nor hangs (the default limit, 8 GiB, is what every other compile here runs under).
TEST(CompileChild, TheMemoryLimitHolds) {
  if (SanitizerBuild()) GTEST_SKIP() << "no address-space limit under AddressSanitizer";
  ChildLimits l = Limits();
  l.allow_unconfined = true;
  l.timeout_s = 60;
  l.address_space_bytes = 32ull << 20;
  ChildRun r = CompileInChild("k.cu", "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }", Options(), l, {});
  EXPECT_FALSE(r.run.ok);
  EXPECT_FALSE(r.timed_out);
  std::string said = r.failure + r.run.log + r.run.status_text;
  EXPECT_NE(said.find("memory"), std::string::npos) << said;
}

TEST(CompileChild, StoppingKillsTheChildAtOnce) {
  ChildLimits l = Limits();
  l.allow_unconfined = true;
  auto start = std::chrono::steady_clock::now();
  auto stop_after = start + std::chrono::milliseconds(500);
  ChildRun r = CompileInChild("bomb.cu", ExpansionBomb(24), Options(), l,
                              [&] { return std::chrono::steady_clock::now() > stop_after; });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.stopped);
  EXPECT_LT(seconds, 5.0);
}

TEST(CompileChild, AMissingWorkerIsAClearFailure) {
  ChildLimits l = Limits();
  l.command = {"/nonexistent/forgek", kCompileWorkerCommand};
  ChildRun r = CompileInChild("k.cu", "int x;", Options(), l, {});
  EXPECT_NE(r.failure.find("cannot start the compile process"), std::string::npos) << r.failure;
}

TEST(CompileChild, AWorkerThatAnswersNonsenseIsAClearFailure) {
  ChildLimits l = Limits();
  l.command = {"/bin/sh", "-c", "echo hello; exit 3"};
  ChildRun r = CompileInChild("k.cu", "int x;", Options(), l, {});
  EXPECT_NE(r.failure.find("exited 3 without an answer"), std::string::npos) << r.failure;
}

// Through the compile service: NVRTC never runs in forgek's process, so its first compile cannot
// replace forgek's SIGINT/SIGTERM handlers (libnvrtc installs its own during its first front-end pass).
void MarkInterrupted(int) {}

TEST(ContainedCompiler, ForgeksSignalHandlersSurviveTheFirstCompile) {
  struct sigaction mine {};
  mine.sa_handler = MarkInterrupted;
  sigemptyset(&mine.sa_mask);
  struct sigaction old_int {}, old_term {};
  ASSERT_EQ(sigaction(SIGINT, &mine, &old_int), 0);
  ASSERT_EQ(sigaction(SIGTERM, &mine, &old_term), 0);
  CompilerOptions o;
  o.threads = 1;
  o.allow_unconfined = LandlockAbi() == 0;
  Compiler c(o);
  CompileRequest req;
  req.name = "first.cu";
  req.source = "#include <cuda_bf16.h>\nextern \"C\" __global__ void k(__nv_bfloat16* y) { y[0] = y[1]; }\n";
  req.arch = "sm90";
  CompileResult r = c.Submit(req).get();
  EXPECT_TRUE(r.ok) << r.Summary();
  struct sigaction now_int {}, now_term {};
  sigaction(SIGINT, nullptr, &now_int);
  sigaction(SIGTERM, nullptr, &now_term);
  EXPECT_EQ(now_int.sa_handler, &MarkInterrupted);
  EXPECT_EQ(now_term.sa_handler, &MarkInterrupted);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

TEST(ContainedCompiler, AnIncludeOfAHostFileIsALocatedError) {
  CompilerOptions o;
  o.threads = 1;
  Compiler c(o);
  CompileRequest req;
  req.name = "evil.cu";
  req.source = "// reads the key\n#include \"/proc/self/environ\"\n";
  req.arch = "sm90";
  CompileResult r = c.CompileNow(req);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].file, "evil.cu");
  EXPECT_EQ(r.messages[0].line, 2);
  EXPECT_NE(r.Summary().find("line 2: #include \"/proc/self/environ\" names an absolute path"), std::string::npos)
      << r.Summary();
}

TEST(ContainedCompiler, ARunawayCompileEndsAtItsDeadlineAndTheServiceGoesOn) {
  CompilerOptions o;
  o.threads = 1;
  o.allow_unconfined = LandlockAbi() == 0;
  Compiler c(o);
  CompileRequest bomb;
  bomb.name = "bomb.cu";
  bomb.source = ExpansionBomb(24);
  bomb.arch = "sm90";
  bomb.timeout_s = 2;
  std::future<CompileResult> f = c.Submit(bomb);
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "the deadline did not hold";
  CompileResult r = f.get();
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.Summary().find("compile exceeded 2s"), std::string::npos) << r.Summary();
  CompileRequest fine = bomb;
  fine.name = "fine.cu";
  fine.source = "extern \"C\" __global__ void k(int* y) { y[0] = 1; }\n";
  fine.timeout_s = 120;
  EXPECT_TRUE(c.CompileNow(fine).ok);
}

}  // namespace
}  // namespace forgek
