// Instruction classes of recorded Hopper disassembly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "forgek/knowledge/knowledge.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Fixture() { return ReadFile(SourceDir() + "/tests/knowledge/data/hopper_gemm.sass"); }

TEST(SassClassifier, CountsHopperClasses) {
  std::map<std::string, int> c = ClassifySass(Fixture());
  EXPECT_EQ(c["HGMMA"], 4);
  EXPECT_EQ(c["UTMALDG"], 2);
  EXPECT_EQ(c["UTMALDG.MULTICAST"], 1);
  EXPECT_EQ(c["UTMASTG"], 1);
  EXPECT_EQ(c["UTMAPF"], 1);
  EXPECT_EQ(c["SYNCS"], 3);
  EXPECT_EQ(c["LDGSTS"], 1);
  EXPECT_EQ(c["LDG.128"], 1);
  EXPECT_EQ(c["LDG"], 1);  // the 4-byte load is not a vector access
  EXPECT_EQ(c["STG.128"], 1);
  EXPECT_EQ(c["STS.128"], 1);
  EXPECT_EQ(c["SHFL"], 2);
  EXPECT_EQ(c["BAR"], 1);
  EXPECT_EQ(c["USETMAXREG"], 2);
  EXPECT_EQ(c["WARPGROUP"], 2);
  EXPECT_EQ(c["BRA"], 3);  // predicated branches count under their opcode
  EXPECT_EQ(c.count("code"), 0u);
  EXPECT_EQ(c.count("Function"), 0u);
}

TEST(SassClassifier, NvdisasmStyleLinesAndEmptyText) {
  EXPECT_TRUE(ClassifySass("").empty());
  auto c = ClassifySass("        /*0080*/ @P0 LDGSTS.E.128 [R1], desc[UR4][R2.64] ;\n  /*0090*/ { SHFL.DOWN PT, R3, R2, 0x1, 0x1f ; }\n");
  EXPECT_EQ(c["LDGSTS"], 1);
  EXPECT_EQ(c["SHFL"], 1);
}

TEST(SassClassifier, EvictFirstStoresCountAsTheirWidthAndAsStreaming) {
  auto c = ClassifySass("  /*0100*/ STG.E.EF.128 desc[UR4][R2.64], R4 ;\n"
                        "  /*0110*/ @P1 STG.E.EF desc[UR4][R6.64], R8 ;\n"
                        "  /*0120*/ STG.E.128 desc[UR4][R10.64], R12 ;\n"
                        "  /*0130*/ LDG.E.EF.128 R16, desc[UR4][R14.64] ;\n");
  EXPECT_EQ(c["STG.EF"], 2);
  EXPECT_EQ(c["STG.128"], 2);
  EXPECT_EQ(c["STG"], 1);
  EXPECT_EQ(c["LDG.EF"], 1);
  EXPECT_EQ(c["LDG.128"], 1);
}

TEST(SassClassifier, ObservationsNameMechanisms) {
  KnowledgeBase kb;
  Diagnostics d;
  ASSERT_TRUE(LoadKnowledgeBase(SourceDir() + "/knowledge", &kb, &d)) << FormatDiagnostics(d);
  KernelProfile p;
  p.label = "candidate:abc";
  p.config = "4096";
  p.sass = Fixture();
  auto obs = AnalyzeKernel(p, "gemm_bf16", "sm90", nullptr, kb);
  std::map<std::string, std::string> mech;
  for (const auto& o : obs)
    if (o.kind == "sass") mech[o.key] = o.mechanism;
  EXPECT_EQ(mech["HGMMA"], "wgmma");
  EXPECT_EQ(mech["UTMALDG"], "tma");
  EXPECT_EQ(mech["UTMALDG.MULTICAST"], "tma_multicast");
  EXPECT_EQ(mech["UTMASTG"], "tma_store");
  EXPECT_EQ(mech["SYNCS"], "mbarrier_pipeline");
  EXPECT_EQ(mech["LDGSTS"], "cp_async");
  EXPECT_EQ(mech["LDG.128"], "vector_16B");
  EXPECT_EQ(mech["SHFL"], "warp_shuffle_reduction");
  EXPECT_EQ(mech["USETMAXREG"], "warp_specialization");
  EXPECT_TRUE(mech.count("BAR"));
  EXPECT_FALSE(mech.count("FFMA"));  // plain arithmetic is not an observation
}

// The real toolchain path: nvcc builds a cubin (no GPU needed), cuobjdump disassembles it.
TEST(SassClassifier, DisassemblesAToolkitCubin) {
  std::string nvcc = std::string(FORGEK_CUDA_ROOT) + "/bin/nvcc";
  std::string root = FORGEK_CUDA_ROOT;
  if (access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc under " << root;
  if (access((root + "/bin/cuobjdump").c_str(), X_OK) != 0 && access((root + "/bin/nvdisasm").c_str(), X_OK) != 0)
    GTEST_SKIP() << "no cuobjdump or nvdisasm under " << root << "/bin";
  TempDir dir;
  WriteFile(dir.file("k.cu"),
            "extern \"C\" __global__ void k(const float4* x, float* y) {\n"
            "  float4 v = x[threadIdx.x];\n"
            "  float s = v.x + v.y + v.z + v.w;\n"
            "  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);\n"
            "  y[threadIdx.x] = s;\n"
            "  __stcs(reinterpret_cast<float4*>(y) + 64 + threadIdx.x, v);  // st.global.cs: evict-first\n}\n");
  std::string cmd = nvcc + " -cubin -arch=sm_90a -o " + dir.file("k.cubin") + " " + dir.file("k.cu") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string sass, err;
  ASSERT_TRUE(DisassembleCubin(ReadFile(dir.file("k.cubin")), &sass, &err)) << err;
  auto c = ClassifySass(sass);
  EXPECT_GE(c["LDG.128"], 1) << sass;
  EXPECT_GE(c["SHFL"], 5) << sass;
  EXPECT_GE(c["STG.EF"], 1) << sass;  // the streaming_store mechanism's SASS, as this toolkit writes it
  EXPECT_FALSE(DisassembleCubin("not a cubin", &sass, &err));
}

}  // namespace
}  // namespace forgek
