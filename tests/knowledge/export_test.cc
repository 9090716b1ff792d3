// Export/import round trips, merging stores from two machines, and forgetting.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "forgek/core/hash.h"
#include "forgek/knowledge/store_io.h"
#include "knowledge/knowledge_fixtures.h"

namespace forgek {
namespace {

using namespace testing_fixtures;

// A store with a bit of everything, as one machine would have it.
void Fill(Store& store, const std::string& device, double speedup) {
  std::string err;
  KnowledgeBase kb = ShippedKnowledge();
  OperatorSpec op = GemmOperator();
  ASSERT_TRUE(AnalyzeAndRecord(store, kb, op, "sm90", device, CublasGemmProfile(), nullptr, &err)) << err;
  DeviceRecord dev;
  dev.name = device;
  dev.arch = "sm90";
  dev.sm_count = 132;
  dev.l2_bytes = 1;
  dev.memory_bytes = 2;
  dev.driver = "580";
  dev.calibrated = true;
  dev.calibrated_at = "2026-01-02T03:04:05Z";
  dev.peaks.dram_gbps = 4000.5;
  ASSERT_TRUE(store.UpsertDevice(dev, &err));
  RunRecord run;
  run.operator_name = op.name;
  run.arch = "sm90";
  ASSERT_TRUE(store.AddRun(&run, &err)) << err;
  ASSERT_TRUE(store.FinishRun(run.id, "finished", "{}", &err)) << err;
  CandidateRecord c{"cand-" + device, op.name, "src", "{}", "", {"wgmma"}, ""};
  ASSERT_TRUE(store.PutCandidate(c, nullptr, &err)) << err;
  AttemptRecord a;
  a.run_id = run.id;
  a.candidate_hash = c.hash;
  a.outcome = Outcome::faster;
  a.measurements = {{"8192^3", true, 0.001, 0.1, 1.0 / 3, 0.5, 0.01, speedup, 70.25}};
  ASSERT_TRUE(store.AddAttempt(&a, &err)) << err;
  // An ablation of the attempt: stages 4 against 3, `speedup` faster, interleaved.
  EvalResult r;
  r.outcome = Outcome::slower;
  r.configs.resize(1);
  r.configs[0].config = "8192^3";
  r.configs[0].correctness.ok = true;
  r.configs[0].incumbent.median_us = 1000;
  r.configs[0].candidate.median_us = 1000 * speedup;
  CandidateManifest family;
  family.params = {{"STAGES", {3, 4}}};
  family.controls = {{"mbarrier_pipeline", {"STAGES"}}};
  for (const SettingComparison& cmp : CompareAblation(op, family, {{"STAGES", 4}}, {{"STAGES", 3}}, r))
    ASSERT_TRUE(RecordComparison(store, {&op, "sm90", device, run.id}, cmp, nullptr, &err)) << err;
  SealRecord s;
  s.id = "seal-" + device;
  s.operator_name = op.name;
  s.arch = "sm90";
  s.candidate_hash = c.hash;
  s.run_id = run.id;
  s.config_us = {{"8192^3", 1234.5678}};
  ASSERT_TRUE(store.AddSeal(s, &err)) << err;
  ExchangeRecord x;
  x.run_id = run.id;
  x.request_json = "{\"model\":\"m\",\"text\":\"\\u00e9\\n\"}";
  ASSERT_TRUE(store.AddExchange(&x, &err)) << err;
}

std::string Export(Store& store) {
  std::string text, err;
  EXPECT_TRUE(ExportStore(store, &text, &err)) << err;
  return text;
}

TEST(Export, RoundTripIsExact) {
  TempDir dir;
  Store a, b;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.25);
  std::string first = Export(a);
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  ImportStats st;
  ASSERT_TRUE(ImportStore(b, first, "a.json", &st, &err)) << err;
  EXPECT_GT(st.added["evidence"], 0);
  EXPECT_GT(st.decisions_updated, 0);
  EXPECT_TRUE(st.present.empty());
  EXPECT_EQ(Export(b), first);
  // Importing again changes nothing.
  ASSERT_TRUE(ImportStore(b, first, "a.json", &st, &err)) << err;
  EXPECT_TRUE(st.added.empty());
  EXPECT_EQ(Export(b), first);
}

TEST(Export, MergeKeepsEvidenceFromBothMachines) {
  TempDir dir;
  Store a, b;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.20);
  Fill(b, "NVIDIA H100", 1.10);
  auto wgmma = [&](Store& s) {
    std::vector<DecisionRecord> ds;
    EXPECT_TRUE(s.ListDecisions({"sm90", "gemm", "large", "wgmma", std::nullopt, 0}, &ds, &err)) << err;
    return ds.empty() ? DecisionRecord{} : ds[0];
  };
  auto stages4 = [&](Store& s) {
    std::vector<DecisionRecord> ds;
    EXPECT_TRUE(s.ListDecisions({"sm90", "gemm", "large", "mbarrier_pipeline", DecisionVerdict::validated, 0}, &ds, &err)) << err;
    return ds.empty() ? DecisionRecord{} : ds[0];
  };
  DecisionRecord before = wgmma(a);
  ASSERT_EQ(before.supporting, 1);  // its own observation; the comparison bears on stages, not on wgmma
  ASSERT_EQ(stages4(a).comparisons, 1);
  ImportStats st;
  b.Close();
  ASSERT_TRUE(MergeStore(a, dir.file("b.db"), &st, &err)) << err;
  DecisionRecord after = wgmma(a);
  EXPECT_EQ(after.id, before.id);    // one decision: same scope, same content hash
  EXPECT_EQ(after.supporting, 2);    // both machines' observation
  EXPECT_GT(after.confidence, before.confidence);
  EXPECT_EQ(stages4(a).comparisons, 2);  // both machines' ablation
  EXPECT_NEAR(stages4(a).effect, std::sqrt(1.20 * 1.10), 1e-9);
  EXPECT_EQ(st.added["observations"], 0);  // same reference profile, same observations
  EXPECT_GT(st.present["observations"], 0);
  EXPECT_EQ(st.added["seals"], 1);
  EXPECT_EQ(st.added["devices"], 1);
  // Merging again adds nothing.
  ASSERT_TRUE(MergeStore(a, dir.file("b.db"), &st, &err)) << err;
  EXPECT_TRUE(st.added.empty());
  EXPECT_EQ(wgmma(a).supporting, 2);
}

// Seals keep their binaries across a merge (the Slurm flow: one store per task, merged at the end):
// the other store's cubins come along, checked against their hashes.
TEST(Export, MergeBringsTheSealedBinaries) {
  TempDir dir;
  Store a, b;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  Fill(b, "NVIDIA H200", 1.10);
  const std::string cubin("\x7f" "ELF sealed elsewhere", 20);
  ASSERT_TRUE(b.PutCubin(Sha256Hex(cubin), cubin, "nvrtc 13.0", true, &err)) << err;
  b.Close();
  ImportStats st;
  ASSERT_TRUE(MergeStore(a, dir.file("b.db"), &st, &err)) << err;
  EXPECT_EQ(st.added["cubins"], 1);
  std::string bytes;
  bool found = false, rebuilt = false;
  ASSERT_TRUE(a.GetCubin(Sha256Hex(cubin), &bytes, &found, &rebuilt, &err)) << err;
  EXPECT_TRUE(found);
  EXPECT_EQ(bytes, cubin);
  EXPECT_TRUE(rebuilt) << "its provenance comes along";
  ImportStats again;
  ASSERT_TRUE(MergeStore(a, dir.file("b.db"), &again, &err)) << err;
  EXPECT_TRUE(again.added.empty());
  EXPECT_EQ(again.present["cubins"], 1);
}

TEST(Export, MalformedImportNamesTheFieldAndChangesNothing) {
  TempDir dir;
  Store a;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.2);
  std::string before = Export(a);
  auto bad = nlohmann::json::parse(before);
  bad["operators"].push_back({{"name", "new_op"}, {"category", "norm"}});
  bad["seals"].push_back({{"id", "s9"}, {"colour", "red"}});
  EXPECT_FALSE(ImportStore(a, bad.dump(), "bad.json", nullptr, &err));
  EXPECT_NE(err.find("bad.json"), std::string::npos) << err;
  EXPECT_NE(err.find("seals[1].colour"), std::string::npos) << err;
  EXPECT_EQ(Export(a), before);  // the valid operator row before it was rolled back too
  EXPECT_FALSE(ImportStore(a, "{\"format\": \"other\"}", "x.json", nullptr, &err));
  EXPECT_NE(err.find("format"), std::string::npos);
  EXPECT_FALSE(ImportStore(a, "{\"format\": \"forgek-knowledge\", \"schema\": 999}", "x.json", nullptr, &err));
  EXPECT_NE(err.find("newer"), std::string::npos);
}

TEST(Forget, DecisionOperatorMechanism) {
  TempDir dir;
  Store a;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.2);
  std::vector<DecisionRecord> ds;
  ASSERT_TRUE(a.ListDecisions({}, &ds, &err));
  size_t total = ds.size();
  std::map<std::string, int> removed;
  ASSERT_TRUE(Forget(a, {ds.back().id.substr(0, 16), "", "", ""}, &removed, &err)) << err;
  EXPECT_EQ(removed["decisions"], 1);
  ASSERT_TRUE(Forget(a, {"", "", "wgmma", "sm90"}, &removed, &err)) << err;
  EXPECT_EQ(removed["decisions"], 1);
  EXPECT_EQ(removed["evidence"], 1);
  ASSERT_TRUE(Forget(a, {"", "gemm_bf16", "", ""}, &removed, &err)) << err;
  EXPECT_GT(removed["observations"], 0);
  ASSERT_TRUE(a.ListDecisions({}, &ds, &err));
  EXPECT_TRUE(ds.empty()) << total;  // every remaining decision came from gemm_bf16 alone
  EXPECT_FALSE(Forget(a, {"", "", "", ""}, &removed, &err));
  EXPECT_FALSE(Forget(a, {"ffff", "", "", ""}, &removed, &err));
}

// A seal is removed by id or unique prefix; its children take its parent.
TEST(Forget, SealByIdOrPrefixKeepsTheLineageConnected) {
  TempDir dir;
  Store a;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.2);
  SealRecord base;
  bool found = false;
  ASSERT_TRUE(a.GetSeal("seal-NVIDIA H200", &base, &found, &err) && found) << err;
  SealRecord mid = base, leaf = base;
  mid.id = "mid-seal";
  mid.parent = base.id;
  leaf.id = "leaf-seal";
  leaf.parent = mid.id;
  ASSERT_TRUE(a.AddSeal(mid, &err)) << err;
  ASSERT_TRUE(a.AddSeal(leaf, &err)) << err;
  std::map<std::string, int> removed;
  ForgetQuery q;
  q.seal = "mid";
  ASSERT_TRUE(Forget(a, q, &removed, &err)) << err;
  EXPECT_EQ(removed["seals"], 1);
  ASSERT_TRUE(a.GetSeal("mid-seal", &mid, &found, &err));
  EXPECT_FALSE(found);
  ASSERT_TRUE(a.GetSeal("leaf-seal", &leaf, &found, &err) && found);
  EXPECT_EQ(leaf.parent, base.id);
  q.seal = "nosuch";
  EXPECT_FALSE(Forget(a, q, &removed, &err));
  EXPECT_EQ(err, "no seal with id nosuch");
  q.seal = "seal-NVIDIA H200";
  q.operator_name = "gemm_bf16";
  EXPECT_FALSE(Forget(a, q, &removed, &err)) << "one selector at a time";
}

// An import is untrusted: each field is checked for type, range and enumeration, and a file with
// one bad field is refused whole, naming the field, with nothing written.
TEST(Export, ImportRejectsBadFieldsWholeAndNamesThem) {
  TempDir dir;
  Store a, b;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.25);
  nlohmann::json good = nlohmann::json::parse(Export(a));
  ASSERT_FALSE(good["decisions"].empty());
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  std::string empty = Export(b);

  struct Case {
    const char* table;
    const char* field;
    nlohmann::json value;
    const char* expected;
  };
  std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::vector<Case> cases = {
      {"decisions", "effect", "fast", "decisions[0].effect: expected a number, got a string"},
      {"decisions", "confidence", -5, "decisions[0].confidence: expected a confidence between 0 and 1, got -5"},
      {"decisions", "verdict", "totally", "decisions[0].verdict: expected one of hypothesis, refuted, validated"},
      {"decisions", "settings_json", "not json", "decisions[0].settings_json: expected JSON text: invalid JSON"},
      {"decisions", "settings_json", "[1]", "decisions[0].settings_json: expected JSON text holding an object"},
      {"decisions", "supporting", 9223372036854775807LL, "decisions[0].supporting: expected an integer up to"},
      {"decisions", "supporting", 18446744073709551615ULL, "decisions[0].supporting: expected an integer that fits"},
      {"decisions", "contradicting", -1, "decisions[0].contradicting: expected an integer >= 0"},
      {"attempts", "outcome", "great", "attempts[0].outcome: expected an outcome"},
      {"runs", "status", "done", "runs[0].status: expected one of"},
      {"seals", "metadata_json", deep, "seals[0].metadata_json: expected JSON text: JSON nested deeper than 128"},
      {"attempt_measurements", "correct", 2, "attempt_measurements[0].correct: expected 0 or 1"},
      {"exchanges", "prompt_tokens", "12", "exchanges[0].prompt_tokens: expected an integer, got a string"},
      {"evidence", "speedup", -1.5, "evidence[0].speedup: expected a number >= 0"},
      {"decisions", "text", nullptr, "decisions[0].text: expected a string, got null"},
      // Keys and the ids rows refer to by: never null or "" (SQLite lets a TEXT key be null).
      {"decisions", "id", nullptr, "decisions[0].id: expected a non-empty string, got null"},
      {"decisions", "id", "", "decisions[0].id: expected a non-empty string, got \"\""},
      {"seals", "id", nullptr, "seals[0].id: expected a non-empty string, got null"},
      {"runs", "id", "", "runs[0].id: expected a non-empty string"},
      {"candidates", "hash", nullptr, "candidates[0].hash: expected a non-empty string"},
      {"attempts", "run_id", "", "attempts[0].run_id: expected a non-empty string"},
      {"attempt_measurements", "attempt_id", nullptr, "attempt_measurements[0].attempt_id: expected a non-empty"},
      {"evidence", "decision_id", "", "evidence[0].decision_id: expected a non-empty string"},
      {"seals", "candidate_hash", "", "seals[0].candidate_hash: expected a non-empty string"},
      // References the schema does not enforce.
      {"seals", "candidate_hash", "nohash", "seals[0].candidate_hash: names candidate \"nohash\", which is neither"},
      {"seals", "parent", "nosuchseal", "seals[0].parent: names seal \"nosuchseal\""},
      {"seals", "run_id", "norun", "seals[0].run_id: names run \"norun\""},
      {"exchanges", "run_id", "norun", "exchanges[0].run_id: names run \"norun\""},
      // Times as the store writes them; enumerations.
      {"seals", "created_at", "9999", "seals[0].created_at: expected a time such as 2026-01-31T23:59:59Z"},
      {"runs", "created_at", "2026-13-01T00:00:00Z", "runs[0].created_at: expected a time"},
      {"decisions", "updated_at", "", "decisions[0].updated_at: expected a time"},
      {"devices", "calibrated_at", "yesterday", "devices[0].calibrated_at: expected a time"},
      {"decisions", "arch", "sm1000", "decisions[0].arch: expected one of sm100, sm90"},
      {"decisions", "regime", "gigantic", "decisions[0].regime: expected one of any, large, skinny, small"},
      // Control characters in text: NUL would cut printed text, ESC drives the terminal.
      {"decisions", "text", std::string("abc\0def", 7), "decisions[0].text: holds NUL (byte 3)"},
      {"operators", "description", "x\x1b[2J", "operators[0].description: holds ESC (byte 1)"},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = good;
    ASSERT_FALSE(doc[c.table].empty()) << c.table;
    doc[c.table][0][c.field] = c.value;
    ImportStats st;
    EXPECT_FALSE(ImportStore(b, doc.dump(), "bad.json", &st, &err)) << c.table << "." << c.field;
    EXPECT_EQ(err.rfind("bad.json: ", 0), 0u) << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_NE(err.find("nothing was imported"), std::string::npos) << err;
    EXPECT_EQ(Export(b), empty) << c.table << "." << c.field;  // not one row of the file was kept
  }
  // The untouched file still imports.
  ImportStats st;
  ASSERT_TRUE(ImportStore(b, good.dump(), "good.json", &st, &err)) << err;
}

// A row without its key would be stored with a null key; a schema number below 1 means nothing;
// a seal whose parent chain loops (a seal that is its own ancestor) is refused.
TEST(Export, ImportRefusesMissingKeysBadSchemaAndParentCycles) {
  TempDir dir;
  Store a, b;
  std::string err;
  ASSERT_TRUE(a.Open(dir.file("a.db"), &err)) << err;
  Fill(a, "NVIDIA H200", 1.25);
  nlohmann::json good = nlohmann::json::parse(Export(a));
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  std::string empty = Export(b);

  nlohmann::json doc = good;
  doc["seals"][0].erase("id");
  EXPECT_FALSE(ImportStore(b, doc.dump(), "k.json", nullptr, &err));
  EXPECT_NE(err.find("k.json: seals[0].id: missing"), std::string::npos) << err;

  doc = good;
  doc["schema"] = -7;
  EXPECT_FALSE(ImportStore(b, doc.dump(), "s.json", nullptr, &err));
  EXPECT_NE(err.find("s.json: schema: expected a schema number >= 1, got -7"), std::string::npos) << err;

  doc = good;
  nlohmann::json sa = good["seals"][0], sb = good["seals"][0];
  sa["id"] = "sa";
  sa["parent"] = "sb";
  sb["id"] = "sb";
  sb["parent"] = "sa";
  doc["seals"] = nlohmann::json::array({sa, sb});
  EXPECT_FALSE(ImportStore(b, doc.dump(), "c.json", nullptr, &err));
  EXPECT_NE(err.find("c.json: seals[0].parent: the parent chain of seal \"sa\" loops"), std::string::npos) << err;
  EXPECT_NE(err.find("nothing was imported"), std::string::npos) << err;
  sa["parent"] = "sa";
  doc["seals"] = nlohmann::json::array({sa});  // not {sa}: one braced json copies it under clang
  EXPECT_FALSE(ImportStore(b, doc.dump(), "c.json", nullptr, &err));
  EXPECT_NE(err.find("loops"), std::string::npos) << err;
  EXPECT_EQ(Export(b), empty);

  // A parent held by the store already (not in the file) is a valid reference.
  ASSERT_TRUE(ImportStore(b, good.dump(), "good.json", nullptr, &err)) << err;
  sb["parent"] = good["seals"][0]["id"];
  doc = good;
  doc["seals"] = nlohmann::json::array({sb});
  for (const char* t : {"candidates", "runs", "attempts", "attempt_measurements", "decisions", "evidence"})
    doc.erase(t);
  ImportStats st;
  // A UTF-8 byte order mark before the JSON is accepted, as for operator.json.
  ASSERT_TRUE(ImportStore(b, "\xEF\xBB\xBF" + doc.dump(), "child.json", &st, &err)) << err;
  EXPECT_EQ(st.added["seals"], 1);

  // A run exported while it ran is not running here: it is kept as interrupted.
  doc = nlohmann::json::parse(Export(b));
  nlohmann::json running = doc["runs"][0];
  running["id"] = "r-live";
  running["status"] = "running";
  doc = {{"format", "forgek-knowledge"}, {"schema", good["schema"]}, {"runs", {running}}};
  ASSERT_TRUE(ImportStore(b, doc.dump(), "live.json", &st, &err)) << err;
  RunRecord r;
  bool found = false;
  ASSERT_TRUE(b.GetRun("r-live", &r, &found, &err)) << err;
  ASSERT_TRUE(found);
  EXPECT_EQ(r.status, "interrupted");
}

TEST(Export, DeeplyNestedImportIsRefusedNotACrash) {
  TempDir dir;
  Store b;
  std::string err;
  ASSERT_TRUE(b.Open(dir.file("b.db"), &err)) << err;
  std::string text = R"({"format": "forgek-knowledge", "schema": 1, "zz": )" + std::string(200000, '[') +
                     std::string(200000, ']') + "}";
  ImportStats st;
  EXPECT_FALSE(ImportStore(b, text, "deep.json", &st, &err));
  EXPECT_NE(err.find("deep.json: JSON nested deeper than 128 levels"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
