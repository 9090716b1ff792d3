// The store's entities: devices, runs, candidates, attempts, profiles, seals, exchanges.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "forgek/core/hash.h"
#include "forgek/knowledge/store.h"
#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(dir_.file("deep/er/store.db"), &err_)) << err_; }
  TempDir dir_;
  Store store_;
  std::string err_;
};

TEST_F(StoreTest, OpenCreatesFoldersAndLatestSchema) {
  EXPECT_TRUE(std::filesystem::exists(dir_.file("deep/er/store.db")));
  EXPECT_EQ(store_.SchemaVersion(), Store::CurrentSchemaVersion());
  Store missing;
  EXPECT_FALSE(missing.Open(dir_.file("none.db"), &err_, StoreMode::existing));
  EXPECT_NE(err_.find("no knowledge store at"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("none.db")));
}

// peaks_json as stores written before DevicePeaks held it: every key, zeros included, as a map.
TEST_F(StoreTest, OldPeaksJsonStillReads) {
  std::string path = dir_.file("deep/er/store.db");
  store_.Close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* insert =
      "INSERT INTO devices (name, arch, sm_count, l2_bytes, memory_bytes, driver, peaks_json, calibrated, "
      "calibrated_at) VALUES ('NVIDIA H200', 'sm90', 132, 62914560, 1, '580', '{\"bf16_tflops\":760.5,"
      "\"copy_kernel_gbps\":3950.0,\"dram_gbps\":4290.0,\"fp16_tflops\":0.0,\"fp8_tflops\":1270.0,"
      "\"memcpy_gbps\":4290.0,\"tf32_tflops\":400.0}', 1, '2026-11-29T12:00:00Z')";
  ASSERT_EQ(sqlite3_exec(db, insert, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  ASSERT_TRUE(store_.Open(path, &err_)) << err_;
  DeviceRecord got;
  bool found = false;
  ASSERT_TRUE(store_.FindDevice("NVIDIA H200", "sm90", &got, &found, &err_)) << err_;
  ASSERT_TRUE(found);
  EXPECT_DOUBLE_EQ(got.peaks.dram_gbps, 4290);
  EXPECT_DOUBLE_EQ(got.peaks.copy_kernel_gbps, 3950);
  EXPECT_DOUBLE_EQ(got.peaks.BandwidthGbps(), 4290);
  EXPECT_DOUBLE_EQ(got.peaks.TflopsFor(DType::bf16), 760.5);
  EXPECT_DOUBLE_EQ(got.peaks.TflopsFor(DType::e4m3), 1270);
  EXPECT_DOUBLE_EQ(got.peaks.TflopsFor(DType::f32), 400);
  EXPECT_DOUBLE_EQ(got.peaks.fp16_tflops, 0);
}

TEST_F(StoreTest, DevicesUpsertByNameAndArch) {
  DeviceRecord d;
  d.name = "NVIDIA H200";
  d.arch = "sm90";
  d.sm_count = 132;
  d.l2_bytes = 62914560;
  d.memory_bytes = 1;
  d.driver = "580";
  d.peaks.dram_gbps = 4800;
  ASSERT_TRUE(store_.UpsertDevice(d, &err_)) << err_;
  d.peaks.dram_gbps = 4290;
  d.calibrated = true;
  ASSERT_TRUE(store_.UpsertDevice(d, &err_)) << err_;
  std::vector<DeviceRecord> all;
  ASSERT_TRUE(store_.ListDevices(&all, &err_));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].calibrated);
  EXPECT_DOUBLE_EQ(all[0].peaks.dram_gbps, 4290);
  bool found = false;
  DeviceRecord got;
  ASSERT_TRUE(store_.FindDevice("NVIDIA H200", "sm100", &got, &found, &err_));
  EXPECT_FALSE(found);
}

TEST_F(StoreTest, RunsCandidatesAttempts) {
  RunRecord run;
  run.operator_name = "gemm_bf16";
  run.arch = "sm90";
  run.agent = "builtin";
  ASSERT_TRUE(store_.AddRun(&run, &err_)) << err_;
  EXPECT_EQ(run.id.size(), 32u);

  CandidateRecord c;
  c.operator_name = "gemm_bf16";
  c.source = "extern \"C\" __global__ void k() {}";
  c.hash = CandidateHash(c.source, {{"BM", 128}});
  c.params_json = R"({"BM":128})";
  c.mechanisms = {"wgmma", "tma"};
  bool inserted = false;
  ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err_)) << err_;
  EXPECT_TRUE(inserted);
  ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err_)) << err_;
  EXPECT_FALSE(inserted);  // deduplicated by content hash

  AttemptRecord a;
  a.run_id = run.id;
  a.iteration = 2;
  a.candidate_hash = c.hash;
  a.outcome = Outcome::faster;
  a.geomean_speedup = 1.07;
  a.measurements = {{"4096^3", true, 1e-3, 0.5, 180.0, 190.0, 0.01, 1.055, 75.0}};
  ASSERT_TRUE(store_.AddAttempt(&a, &err_)) << err_;
  AttemptRecord orphan = a;
  orphan.id.clear();
  orphan.candidate_hash = "not-there";
  EXPECT_FALSE(store_.AddAttempt(&orphan, &err_));
  EXPECT_NE(err_.find("not in the store"), std::string::npos) << err_;

  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store_.ListAttempts(run.id, &attempts, &err_));
  ASSERT_EQ(attempts.size(), 1u);  // the failed insert left nothing behind
  EXPECT_EQ(attempts[0].outcome, Outcome::faster);
  ASSERT_EQ(attempts[0].measurements.size(), 1u);
  EXPECT_DOUBLE_EQ(attempts[0].measurements[0].speedup, 1.055);

  ASSERT_TRUE(store_.FinishRun(run.id, "finished", R"({"best":1.07})", &err_)) << err_;
  RunRecord got;
  bool found = false;
  ASSERT_TRUE(store_.GetRun(run.id, &got, &found, &err_));
  ASSERT_TRUE(found);
  EXPECT_EQ(got.status, "finished");
  EXPECT_FALSE(got.finished_at.empty());
  EXPECT_FALSE(store_.FinishRun("nope", "finished", "{}", &err_));
  CandidateRecord back;
  ASSERT_TRUE(store_.GetCandidate(c.hash, &back, &found, &err_));
  EXPECT_EQ(back.mechanisms, c.mechanisms);
}

TEST_F(StoreTest, TimedAttemptsOfAnOperatorAcrossRunsBestFirst) {
  auto add_run = [&](const std::string& op, const std::string& arch) {
    RunRecord run;
    run.operator_name = op;
    run.arch = arch;
    EXPECT_TRUE(store_.AddRun(&run, &err_)) << err_;
    return run.id;
  };
  auto add_candidate = [&](const std::string& family, int bm) {
    CandidateRecord c;
    c.operator_name = "gemm_bf16";
    c.source = "// " + family;
    c.family = family;
    c.params_json = "{\"BM\":" + std::to_string(bm) + "}";
    c.hash = CandidateHash(c.source, {{"BM", bm}});
    bool inserted = false;
    EXPECT_TRUE(store_.PutCandidate(c, &inserted, &err_)) << err_;
    return c.hash;
  };
  auto add_attempt = [&](const std::string& run, const std::string& hash, Outcome outcome, double speedup) {
    AttemptRecord a;
    a.run_id = run;
    a.candidate_hash = hash;
    a.outcome = outcome;
    a.geomean_speedup = speedup;
    a.measurements = {{"4096^3", true, 1e-3, 0.5, 100.0, 100.0 * speedup, 0.01, speedup, 70.0 * speedup}};
    EXPECT_TRUE(store_.AddAttempt(&a, &err_)) << err_;
  };
  std::string run1 = add_run("gemm_bf16", "sm90"), run2 = add_run("gemm_bf16", "sm90");
  std::string other_op = add_run("softmax_fp32", "sm90"), other_arch = add_run("gemm_bf16", "sm100");
  std::string fam128 = add_candidate("families/a.cu", 128), fam64 = add_candidate("families/a.cu", 64);
  std::string free_form = add_candidate("", 256);
  add_attempt(run1, fam64, Outcome::slower, 0.8);
  add_attempt(run2, fam128, Outcome::faster, 1.1);
  add_attempt(run2, fam64, Outcome::wrong, 0);         // not timed
  add_attempt(run2, free_form, Outcome::faster, 1.3);   // free-form: its source is the candidate
  add_attempt(other_op, fam128, Outcome::faster, 1.5);  // another operator
  add_attempt(other_arch, fam128, Outcome::faster, 1.4);

  std::vector<TimedAttempt> got;
  ASSERT_TRUE(store_.ListTimedAttempts("gemm_bf16", "sm90", 10, &got, &err_)) << err_;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].candidate_hash, free_form);
  EXPECT_EQ(got[0].family, "");
  EXPECT_EQ(got[0].outcome, "faster");
  EXPECT_EQ(got[1].run_id, run2);
  EXPECT_EQ(got[1].params_json, "{\"BM\":128}");
  EXPECT_EQ(got[1].family, "families/a.cu");
  EXPECT_EQ(got[1].candidate_hash, fam128);
  ASSERT_EQ(got[1].measurements.size(), 1u);
  EXPECT_DOUBLE_EQ(got[1].measurements[0].sol_pct, 77.0);
  EXPECT_EQ(got[2].run_id, run1);
  EXPECT_EQ(got[2].outcome, "slower");
  EXPECT_DOUBLE_EQ(got[2].geomean_speedup, 0.8);
  ASSERT_TRUE(store_.ListTimedAttempts("gemm_bf16", "sm90", 1, &got, &err_)) << err_;
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(StoreTest, ProfilesRoundTrip) {
  ProfileRecord p;
  p.operator_name = "gemm_bf16";
  p.arch = "sm90";
  p.subject = "reference";
  p.profile = testing_fixtures::CublasGemmProfile();
  p.profile.wall_s = 12.5;  // what the profile cost: a later run that reuses it plans its end by it
  ASSERT_TRUE(store_.AddProfile(&p, &err_)) << err_;
  ASSERT_TRUE(store_.AddProfile(&p, &err_)) << err_;
  std::vector<ProfileRecord> all;
  ASSERT_TRUE(store_.ListProfiles("gemm_bf16", "sm90", "", &all, &err_)) << err_;
  ASSERT_EQ(all.size(), 1u);
  const auto& l = all[0].profile.launches.at(0);
  EXPECT_EQ(l.name, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
  EXPECT_EQ(l.cluster[0], 2);
  EXPECT_EQ(l.dynamic_smem_bytes, 188636);
  EXPECT_EQ(all[0].profile.metrics.size(), p.profile.metrics.size());
  EXPECT_DOUBLE_EQ(all[0].profile.wall_s, 12.5);
}

// A profile kept before profiles carried their wall time (no "wall_s" in its JSON) still reads, its
// cost unknown (0): a run then plans its end without it.
TEST_F(StoreTest, ProfilesKeptBeforeTheirWallTimeStillRead) {
  ProfileRecord p;
  p.operator_name = "gemm_bf16";
  p.arch = "sm90";
  p.subject = "reference";
  p.profile = testing_fixtures::CublasGemmProfile();
  p.profile.wall_s = 12.5;
  ASSERT_TRUE(store_.AddProfile(&p, &err_)) << err_;
  const std::string path = dir_.file("deep/er/store.db");
  store_.Close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE profiles SET profile_json = json_remove(profile_json, '$.wall_s')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  ASSERT_TRUE(store_.Open(path, &err_)) << err_;
  std::vector<ProfileRecord> all;
  ASSERT_TRUE(store_.ListProfiles("gemm_bf16", "sm90", "", &all, &err_)) << err_;
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].profile.wall_s, 0);
  EXPECT_EQ(all[0].profile.launches.at(0).name, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
  EXPECT_EQ(all[0].profile.metrics.size(), p.profile.metrics.size());
}

TEST_F(StoreTest, SealsAreImmutableWithLineage) {
  SealRecord s1;
  s1.id = "seal1";
  s1.operator_name = "gemm_bf16";
  s1.arch = "sm90";
  s1.candidate_hash = "c1";
  s1.config_us = {{"4096^3", 190.0}};
  s1.created_at = "2026-11-29T10:00:00Z";
  ASSERT_TRUE(store_.AddSeal(s1, &err_)) << err_;
  ASSERT_TRUE(store_.AddSeal(s1, &err_)) << err_;  // identical: fine
  SealRecord changed = s1;
  changed.config_us["4096^3"] = 150;
  EXPECT_FALSE(store_.AddSeal(changed, &err_));
  EXPECT_NE(err_.find("immutable"), std::string::npos);

  SealRecord s2 = s1;
  s2.id = "seal2";
  s2.parent = "seal1";
  s2.created_at = "2026-11-29T10:00:00Z";  // same second: lineage decides which is newest
  ASSERT_TRUE(store_.AddSeal(s2, &err_)) << err_;
  SealRecord orphan = s1;
  orphan.id = "seal3";
  orphan.parent = "missing";
  EXPECT_FALSE(store_.AddSeal(orphan, &err_));

  SealRecord latest;
  bool found = false;
  ASSERT_TRUE(store_.LatestSeal("gemm_bf16", "sm90", &latest, &found, &err_)) << err_;
  ASSERT_TRUE(found);
  EXPECT_EQ(latest.id, "seal2");
  ASSERT_TRUE(store_.LatestSeal("gemm_bf16", "sm100", &latest, &found, &err_));
  EXPECT_FALSE(found);
  std::vector<SealRecord> lineage;
  ASSERT_TRUE(store_.SealLineage("seal2", &lineage, &err_)) << err_;
  ASSERT_EQ(lineage.size(), 2u);
  EXPECT_EQ(lineage[1].id, "seal1");
}

TEST_F(StoreTest, ExchangesInReplayOrder) {
  for (int turn : {1, 0}) {
    ExchangeRecord x;
    x.run_id = "r";
    x.iteration = 3;
    x.turn = turn;
    x.provider = "anthropic";
    x.request_json = R"({"messages":[]})";
    x.prompt_tokens = 100 + turn;
    ASSERT_TRUE(store_.AddExchange(&x, &err_)) << err_;
  }
  std::vector<ExchangeRecord> xs;
  ASSERT_TRUE(store_.ListExchanges("r", &xs, &err_));
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_EQ(xs[0].turn, 0);
  EXPECT_EQ(xs[1].prompt_tokens, 101);
}

TEST_F(StoreTest, TransactionRollsBackEverything) {
  bool ok = store_.Transaction(
      [&](std::string* e) {
        if (!store_.UpsertOperator({"x", "gemm", ""}, e)) return false;
        return false;  // the caller gives up: nothing of it stays
      },
      &err_);
  EXPECT_FALSE(ok);
  std::vector<OperatorRecord> ops;
  ASSERT_TRUE(store_.ListOperators(&ops, &err_));
  EXPECT_TRUE(ops.empty());
}

}  // namespace
}  // namespace forgek
