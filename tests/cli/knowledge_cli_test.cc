// `forgek knowledge ...` through the real binary: empty stores, list, show, export/import, merge, forget.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/knowledge.h"
#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {
namespace {

// A store holding the analysis of cuBLAS's H200 GEMM kernel (docs/profiling.md), as `forgek profile
// --reference` leaves it.
void FillStore(const std::string& path) {
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(path, &err)) << err;
  KnowledgeBase kb;
  Diagnostics d;
  ASSERT_TRUE(LoadKnowledgeBase(SourceDir() + "/knowledge", &kb, &d));
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.category = "gemm";
  op.configs = {{"8192^3", {{"M", 8192}, {"N", 8192}, {"K", 8192}}}};
  op.flops = "2*M*N*K";
  KernelProfile p;
  p.label = "reference";
  p.config = "8192^3";
  KernelLaunchRecord l;
  l.name = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT";
  l.grid[0] = 2, l.grid[1] = 66;
  l.block[0] = 384;
  l.cluster[0] = 2, l.cluster[1] = 1, l.cluster[2] = 1;
  l.registers_per_thread = 168;
  l.dynamic_smem_bytes = 188636;
  p.launches = {l};
  ASSERT_TRUE(AnalyzeAndRecord(store, kb, op, "sm90", "NVIDIA H200", p, nullptr, &err)) << err;
}

TEST(KnowledgeCli, ReadCommandsOnAMissingStoreCreateNothing) {
  TempDir dir;
  std::string store = dir.file("sub/store.db");
  // Every read command calls a missing store an error (exit 1) naming its path, as `seal list` does.
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"knowledge", "list"}, {"--json", "knowledge", "list", "--op", "gemm_bf16"}, {"knowledge", "export"},
           {"seal", "list"}, {"--json", "seal", "list"}}) {
    args.insert(args.begin(), {"--store", store});
    CommandResult r = RunForgek(args);
    EXPECT_EQ(r.exit_code, 1) << args[2] << " " << args[3] << ": " << r.err;
    EXPECT_NE(r.err.find("no knowledge store at " + store), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("sub")));
}

TEST(KnowledgeCli, ListShowsObservationsAndDecisions) {
  TempDir dir;
  std::string store = dir.file("store.db");
  FillStore(store);
  CommandResult r = RunForgek({"--store", store, "knowledge", "list", "--op", "gemm_bf16", "--subject", "reference"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"320x128", "cooperative", "2x1x1", "-> wgmma", "-> tma", "-> warp_specialization",
                        "-> thread_block_cluster", "stages", "hypothesis"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;

  r = RunForgek({"--store", store, "--json", "knowledge", "list", "--op", "gemm_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["category"], "gemm");
  std::set<std::string> mechs;
  for (const auto& o : j["observations"]) mechs.insert(o["mechanism"].get<std::string>());
  for (const char* m : {"wgmma", "tma", "thread_block_cluster", "warp_specialization", "mbarrier_pipeline"})
    EXPECT_TRUE(mechs.count(m)) << m;
  ASSERT_FALSE(j["decisions"].empty());

  std::string id = j["decisions"][0]["id"].get<std::string>().substr(0, 10);
  r = RunForgek({"--store", store, "knowledge", "show", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("evidence (1)"), std::string::npos) << r.out;
  r = RunForgek({"--store", store, "knowledge", "show", "wgmma"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Warpgroup MMA"), std::string::npos);
  r = RunForgek({"--store", store, "knowledge", "show", "nothing-like-this"});
  EXPECT_EQ(r.exit_code, 1);

  r = RunForgek({"--store", store, "--json", "knowledge", "search", "cooperative"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["observations"].empty());
  EXPECT_FALSE(j["mechanisms"].empty());
}

// A store with the reference's analysis and one ablation: stages 4 against 2, 5% faster.
void FillStoreWithAblation(const std::string& path) {
  FillStore(path);
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(path, &err)) << err;
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.category = "gemm";
  op.params = {"M", "N", "K"};
  op.configs = {{"8192^3", {{"M", 8192}, {"N", 8192}, {"K", 8192}}}};
  op.flops = "2*M*N*K";
  CandidateManifest family;
  family.params = {{"STAGES", {2, 4}}};
  family.controls = {{"mbarrier_pipeline", {"STAGES"}}};
  EvalResult r;
  r.outcome = Outcome::slower;
  ConfigResult c;
  c.config = "8192^3";
  c.correctness.ok = true;
  c.incumbent.median_us = 1000;
  c.incumbent.rel_noise = 0.005;
  c.candidate.median_us = 1050;
  c.candidate.rel_noise = 0.005;
  r.configs = {c};
  for (const SettingComparison& cmp : CompareAblation(op, family, {{"STAGES", 4}}, {{"STAGES", 2}}, r))
    ASSERT_TRUE(RecordComparison(store, {&op, "sm90", "NVIDIA H200", "run-1"}, cmp, nullptr, &err)) << err;
}

TEST(KnowledgeCli, ListIsATableAndShowListsTheComparisons) {
  TempDir dir;
  std::string store = dir.file("store.db");
  FillStoreWithAblation(store);
  // `--op gemm` is the operator `forgek run --op gemm` ran: gemm_bf16 (its alias).
  CommandResult r = RunForgek({"--store", store, "knowledge", "list", "--op", "gemm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gemm_bf16 on sm90 (category gemm):"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(": 0 observation(s)"), std::string::npos) << r.out;
  for (const char* s : {"mechanism", "setting", "regime", "verdict", "effect [interval]", "cmp", "learned on"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  std::string validated_row, refuted_row;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("stages=4") != std::string::npos) validated_row = line;
    if (line.find("stages=2") != std::string::npos) refuted_row = line;
    EXPECT_EQ(line.find("{\""), std::string::npos) << "no JSON in the table: " << line;
    EXPECT_LE(line.size(), 160u) << line;
  }
  EXPECT_NE(validated_row.find("mbarrier_pipeline"), std::string::npos) << r.out;
  EXPECT_NE(validated_row.find("validated"), std::string::npos) << validated_row;
  EXPECT_NE(validated_row.find("1.05x ["), std::string::npos) << validated_row;
  EXPECT_NE(validated_row.find("gemm_bf16"), std::string::npos) << validated_row;
  EXPECT_NE(refuted_row.find("refuted"), std::string::npos) << refuted_row;

  r = RunForgek({"--store", store, "--json", "knowledge", "list", "--op", "gemm_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::string id;
  for (const auto& d : j["decisions"])
    if (d["setting"] == "stages=4") {
      id = d["id"].get<std::string>();
      EXPECT_EQ(d["comparisons"], 1);
      EXPECT_EQ(d["effect_interval"].size(), 2u);
      EXPECT_FALSE(d["transferred"].get<bool>());
    }
  ASSERT_FALSE(id.empty()) << r.out;
  r = RunForgek({"--store", store, "knowledge", "show", id.substr(0, 12)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"ablation", "vs stages=2", "8192^3", "1000.00 us vs    1050.00 us", "noise"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  r = RunForgek({"--store", store, "--json", "knowledge", "show", id.substr(0, 12)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["evidence"].size(), 1u);
  EXPECT_EQ(j["evidence"][0]["detail"]["configs"][0]["against_us"], 1050.0);
}

TEST(KnowledgeCli, ExportImportMergeForget) {
  TempDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  FillStore(a);
  CommandResult r = RunForgek({"--store", a, "knowledge", "export", "-o", dir.file("a.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunForgek({"--store", b, "knowledge", "import", dir.file("a.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult ea = RunForgek({"--store", a, "knowledge", "export"});
  CommandResult eb = RunForgek({"--store", b, "knowledge", "export"});
  ASSERT_EQ(eb.exit_code, 0);
  EXPECT_EQ(ea.out, eb.out);
  EXPECT_EQ(ea.out, ReadFile(dir.file("a.json")));

  r = RunForgek({"--store", c, "--json", "knowledge", "merge", a});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["added"]["observations"].get<int>(), 0);
  r = RunForgek({"--store", c, "--json", "knowledge", "merge", a});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["added"].empty());

  WriteFile(dir.file("bad.json"), "{\"format\": \"forgek-knowledge\", \"schema\": 1, \"nonsense\": []}");
  r = RunForgek({"--store", c, "knowledge", "import", dir.file("bad.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nonsense"), std::string::npos) << r.err;

  r = RunForgek({"--store", c, "knowledge", "forget"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunForgek({"--store", c, "knowledge", "forget", "--op", "gemm_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunForgek({"--store", c, "--json", "knowledge", "list", "--op", "gemm_bf16"});
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["observations"].empty());
  EXPECT_TRUE(j["decisions"].empty());
}

}  // namespace
}  // namespace forgek
