// Tests of the NVRTC log parsers on log text recorded from NVRTC 13.0 (and an older ptxas).
#include "compile/compile_log.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

// Recorded from NVRTC 13.0 compiling a kernel with three errors, one inside a template.
constexpr const char* kFrontEndLog = R"(k.cu(2): error: A function without execution space annotations (__host__/__device__/__global__) is considered a host function, and host functions are not allowed in JIT mode. Consider using -default-device flag to process unannotated functions as __device__ functions in JIT mode
  void f(int);
       ^

k.cu(5): error: too many arguments in function call
    f(1, 2);
         ^

k.cu(1): error: expression must have class type but it has type "float"
  template <typename T> __device__ T twice(T x) { return x.foo(); }
                                                         ^
          detected during instantiation of "T twice(T) [with T=float]" at line 4

k.cu(3): warning #177-D: variable "unused" was declared but never referenced
  	int unused = 3;
  	    ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

3 errors detected in the compilation of "k.cu".
)";

TEST(CompileLog, FrontEndMessagesCarryFileLineAndColumn) {
  std::vector<CompileMessage> msgs = ParseCompileMessages(kFrontEndLog);
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_EQ(msgs[0].file, "k.cu");
  EXPECT_EQ(msgs[0].line, 2);
  EXPECT_EQ(msgs[0].column, 6);  // "void f(int);": the caret sits under the 'f'
  EXPECT_EQ(msgs[0].severity, "error");
  EXPECT_EQ(msgs[1].line, 5);
  EXPECT_EQ(msgs[1].column, 8);
  EXPECT_EQ(msgs[1].message, "too many arguments in function call");
  EXPECT_EQ(msgs[2].line, 1);
  EXPECT_NE(msgs[2].message.find("detected during instantiation"), std::string::npos) << msgs[2].message;
  EXPECT_EQ(msgs[2].message.find("template <typename T>"), std::string::npos)
      << "the echoed source line is not part of the message: " << msgs[2].message;
  EXPECT_EQ(msgs[3].severity, "warning");
  EXPECT_EQ(msgs[3].line, 3);
  EXPECT_EQ(msgs[3].column, 6);  // a tab counts as one column
  EXPECT_EQ(msgs[3].message, "variable \"unused\" was declared but never referenced");
}

TEST(CompileLog, ToolMessagesHaveNoLine) {
  std::vector<CompileMessage> msgs = ParseCompileMessages(
      "nvrtc: error: unrecognized option --bogus-opt found\n"
      "ptxas warning : For profile sm_90a adjusting per thread register count of 16 to lower bound of 24\n"
      "ptxas error   : Entry function 'big' uses too much shared data (0x13880 bytes, 0xc000 max)\n");
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[0].severity, "error");
  EXPECT_EQ(msgs[0].line, 0);
  EXPECT_EQ(msgs[0].message, "nvrtc: unrecognized option --bogus-opt found");
  EXPECT_EQ(msgs[1].severity, "warning");
  EXPECT_EQ(msgs[2].severity, "error");
  EXPECT_NE(msgs[2].message.find("too much shared data"), std::string::npos);
}

TEST(CompileLog, PtxasErrorsAtAPtxLineAreKept) {
  std::vector<CompileMessage> msgs = ParseCompileMessages(
      "ptxas application ptx input, line 41; error   : Instruction 'wgmma.fence' not supported on .target "
      "'sm_100a'\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].severity, "error");
  EXPECT_EQ(msgs[0].line, 0) << "a PTX line is not a line of the .cu file";
  EXPECT_EQ(msgs[0].message, "ptxas: PTX line 41: Instruction 'wgmma.fence' not supported on .target 'sm_100a'");
  EXPECT_EQ(msgs[1].message, "ptxas: Ptx assembly aborted due to errors");
}

TEST(CompileLog, CleanLogHasNoMessages) {
  EXPECT_TRUE(ParseCompileMessages("ptxas info    : 0 bytes gmem\n").empty());
  EXPECT_TRUE(ParseCompileMessages("").empty());
}

// Recorded from NVRTC 13.0: two entries (one a template instance) and a spilling kernel.
constexpr const char* kPtxasLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2tkILi3EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z2tkILi3EEvPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 6.202 ms
ptxas info    : Compiling entry function 'add' for 'sm_90a'
ptxas info    : Function properties for add
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 4.050 ms
ptxas info    : Compiling entry function 'spill' for 'sm_90a'
ptxas info    : Function properties for spill
ptxas         .     1208 bytes stack frame, 1360 bytes spill stores, 1552 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 1208 bytes cumulative stack size
ptxas info    : Compile time = 53.808 ms
)";

// A message located in a header keeps its text and column, but not the header's echoed line:
// what leaves forgek quotes the candidate's own lines only.
TEST(QuoteOnlyOwnLines, DropsTheEchoedLinesOfOtherFiles) {
  const std::string log =
      "/usr/local/cuda/include/x.h(7): error: SECRET_HEADER_LINE is not allowed\n"
      "  int SECRET_HEADER_LINE = 1;\n"
      "      ^\n"
      "          detected during instantiation at line 4 of k.cu\n"
      "\n"
      "k.cu(3): error: own error\n"
      "  own_line();\n"
      "  ^\n"
      "\n";
  std::string kept = QuoteOnlyOwnLines(log, "k.cu", 1 << 20);
  EXPECT_EQ(kept.find("  int SECRET_HEADER_LINE = 1;"), std::string::npos) << kept;
  EXPECT_NE(kept.find("x.h(7): error: SECRET_HEADER_LINE is not allowed"), std::string::npos) << kept;
  EXPECT_NE(kept.find("detected during instantiation"), std::string::npos) << kept;
  EXPECT_NE(kept.find("  own_line();"), std::string::npos) << kept;
  std::vector<CompileMessage> own = ParseCompileMessages(kept);
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[1].line, 3);
  EXPECT_EQ(own[1].column, 1);
  EXPECT_EQ(QuoteOnlyOwnLines(kFrontEndLog, "k.cu", 1 << 20), std::string(kFrontEndLog)) << "own lines unchanged";
}

TEST(QuoteOnlyOwnLines, CutsAtTheLimitAndSaysSo) {
  std::string log(10000, 'x');
  std::string kept = QuoteOnlyOwnLines(log, "k.cu", 100);
  EXPECT_LT(kept.size(), 200u);
  EXPECT_NE(kept.find("left out"), std::string::npos);
}

// A megabyte-long line (a quoted expansion) must not send std::regex into deep recursion.
TEST(CompileLog, AVeryLongLineIsParsedWithoutCrashing) {
  std::string log = "k.cu(1): error: static assertion failed with \"" + std::string(1 << 20, 'a') + "\"\n";
  std::vector<CompileMessage> m = ParseCompileMessages(log);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_LT(m[0].message.size(), 5000u);
  EXPECT_LT(QuoteOnlyOwnLines(log, "k.cu", 1 << 22).size(), 5000u);
}

TEST(PtxasReport, OneEntryPerKernelWithItsResources) {
  std::vector<KernelResources> k = ParsePtxasReport(kPtxasLog);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].kernel, "_Z2tkILi3EEvPf");
  EXPECT_EQ(k[0].registers, 8);
  EXPECT_EQ(k[1].kernel, "add");
  EXPECT_EQ(k[1].registers, 10);
  EXPECT_EQ(k[1].static_smem_bytes, 1024);
  EXPECT_EQ(k[1].spill_store_bytes, 0);
  EXPECT_EQ(k[2].kernel, "spill");
  EXPECT_EQ(k[2].registers, 32);
  EXPECT_EQ(k[2].stack_bytes, 1208);
  EXPECT_EQ(k[2].spill_store_bytes, 1360);
  EXPECT_EQ(k[2].spill_load_bytes, 1552);
}

// Recorded from ptxas 13.0 (sm_90a): the serialisation notes name their kernel, before its "Used" line.
TEST(PtxasReport, SerializedWgmmasNameTheirKernelAndCode) {
  const std::string log =
      "ptxas info    : Compiling entry function 'fast' for 'sm_90a'\n"
      "ptxas info    : Function properties for fast\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers\n"
      "ptxas info    : Compiling entry function 'attention_prefill_fa3' for 'sm_90a'\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non "
      "wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in "
      "the function 'attention_prefill_fa3'\n"
      "ptxas info    : Function properties for attention_prefill_fa3\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 80 by compiler to allow use of registers "
      "in GMMA in function 'fast'\n";
  std::vector<KernelResources> k = ParsePtxasReport(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kernel, "fast");
  EXPECT_EQ(k[0].wgmma_serialized, "") << "C7519 (an injected arrive) is not a serialisation";
  EXPECT_EQ(k[1].kernel, "attention_prefill_fa3");
  EXPECT_EQ(k[1].wgmma_serialized, "C7515");
  EXPECT_EQ(k[1].registers, 168);
}

TEST(PtxasReport, OlderFormatWithConstantBanksAndDeviceFunctions) {
  // Older ptxas lists constant banks on the "Used" line and properties of called functions.
  std::vector<KernelResources> k = ParsePtxasReport(
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    24 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Function properties for gemm\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, 49152 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]\n");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kernel, "gemm");
  EXPECT_EQ(k[0].registers, 168);
  EXPECT_EQ(k[0].static_smem_bytes, 49152);
  EXPECT_EQ(k[0].const_bytes, 408);
  EXPECT_EQ(k[0].spill_store_bytes, 0) << "the helper's spills were attributed to the entry";
}

TEST(CompileSummary, ErrorsAsLineAndMessage) {
  CompileResult r;
  r.messages = ParseCompileMessages(kFrontEndLog);
  std::string s = r.Summary();
  EXPECT_NE(s.find("line 5: too many arguments in function call"), std::string::npos) << s;
  EXPECT_EQ(s.find("unused"), std::string::npos) << "warnings are not in the summary of a failure: " << s;
}

TEST(CompileSummary, ResourcesAndSpillsWhenOk) {
  CompileResult r;
  r.ok = true;
  r.kernels = ParsePtxasReport(kPtxasLog);
  std::string s = r.Summary();
  EXPECT_NE(s.find("add: 10 registers"), std::string::npos) << s;
  EXPECT_NE(s.find("SPILLS 1360 B stores"), std::string::npos) << s;
}

}  // namespace
}  // namespace forgek
