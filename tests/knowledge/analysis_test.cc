// Analysis of the H200 cuBLAS GEMM profile: launch shape, name fields, metrics, roofline.
#include <gtest/gtest.h>

#include <filesystem>

#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

using namespace testing_fixtures;

const Observation* Find(const std::vector<Observation>& obs, const std::string& kind, const std::string& key) {
  for (const auto& o : obs)
    if (o.kind == kind && o.key == key) return &o;
  return nullptr;
}

class AnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = ShippedKnowledge();
    ASSERT_TRUE(ResolveHardware(nullptr, kb_, "sm90", "NVIDIA H200", &hw_, &err_)) << err_;
    obs_ = AnalyzeKernel(CublasGemmProfile(), "gemm_bf16", "sm90", &hw_, kb_);
  }
  std::string Value(const std::string& kind, const std::string& key) {
    const Observation* o = Find(obs_, kind, key);
    return o ? o->value : "<missing " + kind + "." + key + ">";
  }
  std::string Mech(const std::string& kind, const std::string& key) {
    const Observation* o = Find(obs_, kind, key);
    return o ? o->mechanism : "<missing>";
  }
  KnowledgeBase kb_;
  HardwareSpec hw_;
  std::string err_;
  std::vector<Observation> obs_;
};

TEST_F(AnalysisTest, LaunchShape) {
  EXPECT_EQ(hw_.name, "NVIDIA H200");
  EXPECT_EQ(Value("launch", "grid"), "2x66x1");
  EXPECT_EQ(Value("launch", "warpgroups"), "3");
  EXPECT_EQ(Mech("launch", "warpgroups"), "") << "a thread count shows no roles; the name's schedule does";
  EXPECT_EQ(Value("launch", "cluster"), "2x1x1");
  EXPECT_EQ(Mech("launch", "cluster"), "thread_block_cluster");
  EXPECT_EQ(Value("launch", "registers"), "168");
  EXPECT_EQ(Value("launch", "smem"), "188636");
  // (320+128) x 64 x 2 B = 57,344 B a stage: 188,636 B holds 3, as the name says.
  EXPECT_EQ(Value("launch", "stages_from_smem"), "3");
  EXPECT_EQ(Value("launch", "blocks_per_sm"), "1");
  EXPECT_EQ(Value("launch", "persistent"), "yes");
  EXPECT_EQ(Mech("launch", "persistent"), "persistent_grid");
}

TEST_F(AnalysisTest, NameFields) {
  EXPECT_EQ(Value("name", "tile"), "320x128");
  EXPECT_EQ(Mech("name", "tile"), "wgmma");
  EXPECT_EQ(Value("name", "k_step"), "64");
  EXPECT_EQ(Value("name", "stages"), "3");
  EXPECT_EQ(Value("name", "cluster"), "1x2");
  EXPECT_EQ(Value("name", "schedule"), "cooperative");
  EXPECT_EQ(Mech("name", "schedule"), "warp_specialization");
  EXPECT_EQ(Mech("name", "tma"), "tma");
  EXPECT_EQ(Mech("name", "multicast"), "tma_multicast");
}

TEST_F(AnalysisTest, Metrics) {
  EXPECT_EQ(Value("metric", "bottleneck"), "tensor");
  EXPECT_EQ(Value("metric", "tensor_pipe_pct"), "78.5");
  EXPECT_EQ(Mech("metric", "tensor_pipe_pct"), "wgmma");
  EXPECT_EQ(Value("metric", "dram_pct"), "21.0");
  EXPECT_EQ(Value("metric", "l2_hit_pct"), "90.0");
  EXPECT_EQ(Value("metric", "bank_conflicts"), "150");
  EXPECT_EQ(Value("metric", "occupancy_pct"), "18.7");
}

TEST_F(AnalysisTest, Roofline) {
  EXPECT_EQ(Value("roofline", "bound"), "compute");
  const Observation* sol = Find(obs_, "roofline", "sol_pct");
  ASSERT_NE(sol, nullptr);
  // 1.0995e12 FLOP / 989.4 TFLOP/s = 1111 us of 1446 us measured.
  EXPECT_NEAR(sol->number, 76.9, 0.2);
  const Observation* tf = Find(obs_, "roofline", "tflops");
  ASSERT_NE(tf, nullptr);
  EXPECT_NEAR(tf->number, 760.4, 0.5);
}

// The softmax reference (operators/softmax_fp32/reference.cu) on a long row: one 1024-thread CTA per
// slice of a cluster. Eight warpgroups of threads, one role: it is not warp-specialised.
TEST_F(AnalysisTest, TheSoftmaxReferenceClaimsNoWarpSpecialisation) {
  KernelProfile p;
  p.label = "reference";
  p.config = "M4096_N32768";
  KernelLaunchRecord l;
  l.name = "softmax_fp32_reference";
  l.grid[0] = 8192;
  l.block[0] = 1024;
  l.cluster[0] = 2, l.cluster[1] = 1, l.cluster[2] = 1;
  l.registers_per_thread = 40;
  l.duration_us = 900;
  p.launches = {l};
  p.sass = "        /*0100*/                   SHFL.BFLY PT, R5, R4, 0x10, 0x1f ;\n"
           "        /*0110*/                   LDG.E.128 R8, desc[UR4][R2.64] ;\n"
           "        /*0120*/                   MUFU.EX2 R9, R9 ;\n"
           "        /*0130*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n";
  p.time_us = 900;
  p.bytes = 2.0 * 4 * 4096 * 32768;
  auto obs = AnalyzeKernel(p, "softmax_fp32", "sm90", &hw_, kb_, "fp32_tflops");
  EXPECT_EQ(Find(obs, "launch", "warpgroups")->value, "8");
  for (const auto& o : obs) {
    EXPECT_NE(o.mechanism, "warp_specialization") << o.kind << " " << o.key << " = " << o.value;
    EXPECT_NE(o.mechanism, "setmaxnreg") << o.kind << " " << o.key;
    if (!o.mechanism.empty()) {
      EXPECT_FALSE(o.evidence.empty()) << "a claim names its evidence: " << o.key;
    }
  }
  for (const auto& h : HypothesesFromObservations(obs, "softmax", "large", "NVIDIA H200"))
    EXPECT_NE(h.scope.mechanism, "warp_specialization") << h.evidence.source;
}

TEST_F(AnalysisTest, MemoryBoundKernelWithoutMetricsOrName) {
  KernelProfile p;
  p.label = "reference";
  p.config = "big";
  KernelLaunchRecord l;
  l.name = "softmax_rows";
  l.grid[0] = 8192;
  l.block[0] = 256;
  l.registers_per_thread = 32;
  p.launches = {l};
  p.time_us = 100;
  p.flops = 1e9;
  p.bytes = 400e6;
  auto obs = AnalyzeKernel(p, "softmax_fp32", "sm90", &hw_, kb_, "fp32_tflops");
  EXPECT_EQ(Find(obs, "name", "tile"), nullptr);
  EXPECT_EQ(Find(obs, "launch", "persistent"), nullptr);
  const Observation* bound = Find(obs, "roofline", "bound");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->value, "memory");
  EXPECT_NEAR(Find(obs, "roofline", "sol_pct")->number, 100.0 * (400e6 / 4800e9) / 100e-6, 0.1);
}

TEST(Hardware, DatasheetsAndCalibration) {
  KnowledgeBase kb = ShippedKnowledge();
  ASSERT_EQ(kb.hardware.size(), 3u);
  HardwareSpec hw;
  std::string err;
  ASSERT_TRUE(ResolveHardware(nullptr, kb, "sm90", "", &hw, &err));
  EXPECT_EQ(hw.name, "NVIDIA H100");  // unknown device: the conservative sm90 datasheet
  ASSERT_TRUE(ResolveHardware(nullptr, kb, "sm100", "NVIDIA B200", &hw, &err));
  EXPECT_EQ(hw.sm_count, 148);
  EXPECT_FALSE(ResolveHardware(nullptr, kb, "sm80", "", &hw, &err));
  EXPECT_NE(err.find("sm80"), std::string::npos);

  TempDir dir;
  Store store;
  ASSERT_TRUE(store.Open(dir.file("s.db"), &err)) << err;
  DeviceRecord d;
  d.name = "NVIDIA H200";
  d.arch = "sm90";
  d.sm_count = 132;
  d.l2_bytes = 62914560;
  d.driver = "580.159.04";
  d.calibrated = true;
  d.calibrated_at = "2026-11-29T12:00:00Z";
  d.peaks.dram_gbps = 4290;
  d.peaks.bf16_tflops = 760;
  ASSERT_TRUE(store.UpsertDevice(d, &err)) << err;
  ASSERT_TRUE(ResolveHardware(&store, kb, "sm90", "NVIDIA H200", &hw, &err)) << err;
  EXPECT_TRUE(hw.calibrated);
  EXPECT_DOUBLE_EQ(hw.peaks.dram_gbps, 4290);
  EXPECT_DOUBLE_EQ(hw.peaks.bf16_tflops, 760);
  EXPECT_DOUBLE_EQ(hw.peaks.fp8_tflops, 1978.9);  // not calibrated: datasheet
}

TEST(Catalogue, ShippedMechanismsCoverBothArchitectures) {
  KnowledgeBase kb = ShippedKnowledge();
  for (const char* id : {"wgmma", "tma", "tma_multicast", "thread_block_cluster", "warp_specialization",
                         "mbarrier_pipeline", "cp_async", "vector_16B", "warp_shuffle_reduction", "persistent_grid",
                         "split_k", "tcgen05_mma", "tensor_memory"}) {
    const Mechanism* m = kb.FindMechanism(id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_FALSE(m->llm_words.empty()) << id;
  }
  EXPECT_EQ(kb.FindMechanism("wgmma")->archs, std::vector<std::string>{"sm90"});
  EXPECT_EQ(kb.FindMechanism("tcgen05_mma")->archs, std::vector<std::string>{"sm100"});
}

TEST(Catalogue, BadFilesNameFileAndField) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("mechanisms"));
  WriteFile(dir.file("mechanisms/a.json"), R"({"mechanisms": [{"id": "x", "name": "X", "archs": ["sm90"]}]})");
  WriteFile(dir.file("mechanisms/b.json"), "{not json");
  KnowledgeBase kb;
  Diagnostics d;
  EXPECT_FALSE(LoadKnowledgeBase(dir.path(), &kb, &d));
  std::string text = FormatDiagnostics(d);
  EXPECT_NE(text.find("a.json"), std::string::npos) << text;
  EXPECT_NE(text.find("mechanisms[0].unit"), std::string::npos) << text;
  EXPECT_NE(text.find("b.json"), std::string::npos) << text;
  EXPECT_TRUE(kb.mechanisms.empty());
}

TEST(Catalogue, BadPeaksNameFileAndKey) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("hardware"));
  const std::string head = R"({"name": "G", "arch": "sm90", "sm_count": 1, "peaks": )";
  WriteFile(dir.file("hardware/a.json"), head + R"({"dram_gbps": 1, "bf16_tflops": "fast"}})");
  WriteFile(dir.file("hardware/b.json"), head + R"({"dram_gbps": 1, "bf17_tflops": 2}})");
  WriteFile(dir.file("hardware/c.json"), head + R"({"dram_gbps": 1, "fp4_tflops": 9000}})");
  KnowledgeBase kb;
  Diagnostics d;
  EXPECT_FALSE(LoadKnowledgeBase(dir.path(), &kb, &d));
  std::string text = FormatDiagnostics(d);
  EXPECT_NE(text.find("a.json"), std::string::npos) << text;
  EXPECT_NE(text.find("peaks.bf16_tflops"), std::string::npos) << text;
  EXPECT_NE(text.find("must be a number"), std::string::npos) << text;
  EXPECT_NE(text.find("peaks.bf17_tflops"), std::string::npos) << text;
  EXPECT_EQ(text.find("c.json"), std::string::npos) << text;
  std::filesystem::remove(dir.file("hardware/a.json"));
  std::filesystem::remove(dir.file("hardware/b.json"));
  d.clear();
  ASSERT_TRUE(LoadKnowledgeBase(dir.path(), &kb, &d)) << FormatDiagnostics(d);
  ASSERT_EQ(kb.hardware.size(), 1u);
  EXPECT_DOUBLE_EQ(kb.hardware[0].peaks.fp4_tflops, 9000);
}

}  // namespace
}  // namespace forgek
