// What an import does with the decisions it brings: each is derived again from the evidence that
// arrives with it (and that the store holds), and one left with none is dropped; the candidates a
// dispatch seal's table names must arrive too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "forgek/knowledge/store_io.h"
#include "test_util.h"

namespace forgek {
namespace {

using nlohmann::json;

std::string Seed() { return ReadFile(SourceDir() + "/tests/fuzz/corpus/knowledge_import/small_export.json"); }

std::vector<DecisionRecord> Decisions(Store& store) {
  std::vector<DecisionRecord> ds;
  std::string err;
  EXPECT_TRUE(store.ListDecisions({}, &ds, &err)) << err;
  return ds;
}

// The fuzz seed is an export of schema 2: decision d1 ("wgmma", validated 1.2x) rests on one
// `attempt` evidence row, which an import leaves out. The verdict used to stay, with nothing
// behind it, and retrieval served it as this operator's knowledge.
TEST(ImportDecisions, TheFuzzSeedLeavesNoDecisionWithoutEvidence) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("k.db"), &err)) << err;
  ImportStats st;
  ASSERT_TRUE(ImportStore(store, Seed(), "small_export.json", &st, &err)) << err;
  EXPECT_EQ(st.left_out, 1);
  EXPECT_EQ(st.decisions_dropped, 1);
  EXPECT_EQ(st.added.count("decisions"), 0u) << "a dropped decision is not counted as added";
  EXPECT_EQ(st.added["seals"], 1) << "the rest of the file is imported";
  for (const DecisionRecord& d : Decisions(store)) {
    DecisionRecord full;
    std::vector<EvidenceRecord> evidence;
    bool found = false;
    ASSERT_TRUE(store.GetDecision(d.id, &full, &evidence, &found, &err)) << err;
    EXPECT_FALSE(evidence.empty()) << "a decision without evidence: " << d.id << " " << d.text;
  }
  bool have = false;
  DecisionRecord d1;
  ASSERT_TRUE(store.GetDecision("d1", &d1, nullptr, &have, &err)) << err;
  EXPECT_FALSE(have) << DecisionVerdictName(d1.verdict) << " " << d1.text;
  // Importing it again drops it again and adds nothing else.
  ASSERT_TRUE(ImportStore(store, Seed(), "small_export.json", &st, &err)) << err;
  EXPECT_EQ(st.decisions_dropped, 1);
  EXPECT_TRUE(st.added.empty());
  EXPECT_TRUE(Decisions(store).empty());
}

// The same decision with an expert observation as well: it stays, but as what the observation
// alone shows (as schema migration 4 leaves such a decision), not as the file says.
TEST(ImportDecisions, ADecisionKeepsOnlyWhatItsSurvivingEvidenceShows) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("k.db"), &err)) << err;
  json doc = json::parse(Seed());
  json observation = doc["evidence"][0];
  observation["id"] = "e2";
  observation["kind"] = "observation";
  observation["source"] = "reference kernel nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopB_NNT";
  doc["evidence"].push_back(observation);
  ImportStats st;
  ASSERT_TRUE(ImportStore(store, doc.dump(), "seed+observation.json", &st, &err)) << err;
  EXPECT_EQ(st.decisions_dropped, 0);
  DecisionRecord d1;
  bool have = false;
  ASSERT_TRUE(store.GetDecision("d1", &d1, nullptr, &have, &err)) << err;
  ASSERT_TRUE(have);
  EXPECT_EQ(d1.verdict, DecisionVerdict::hypothesis) << d1.text;
  EXPECT_EQ(d1.effect, 1.0);
  EXPECT_EQ(d1.comparisons, 0);
  EXPECT_LE(d1.confidence, 0.3);
  EXPECT_NE(d1.text.find("seen in an expert kernel"), std::string::npos) << d1.text;

  // A decision of the current schema whose row claims more than its evidence shows is derived again.
  json now = {{"format", "forgek-knowledge"}, {"schema", Store::CurrentSchemaVersion()}};
  now["decisions"] = json::array({{{"id", "d9"}, {"arch", "sm90"}, {"category", "gemm"}, {"regime", "large"},
                                   {"mechanism", "mbarrier_pipeline"}, {"setting", "stages=4"},
                                   {"settings_json", "{\"STAGES\":4}"}, {"verdict", "validated"}, {"effect", 9.0},
                                   {"confidence", 0.99}, {"supporting", 40}, {"contradicting", 0},
                                   {"text", "helps 9x"}, {"created_at", "2026-01-01T00:00:00Z"},
                                   {"updated_at", "2026-01-01T00:00:00Z"}}});
  now["evidence"] = json::array({{{"id", "e9"}, {"decision_id", "d9"}, {"kind", "ablation"}, {"source", "ablation"},
                                  {"operator_name", "gemm_bf16"}, {"supports", 0}, {"speedup", 0.8},
                                  {"noise", 0.01}, {"created_at", "2026-01-02T00:00:00Z"}}});
  ASSERT_TRUE(ImportStore(store, now.dump(), "now.json", &st, &err)) << err;
  DecisionRecord d9;
  ASSERT_TRUE(store.GetDecision("d9", &d9, nullptr, &have, &err)) << err;
  ASSERT_TRUE(have);
  EXPECT_EQ(d9.verdict, DecisionVerdict::refuted) << d9.text;
  EXPECT_NEAR(d9.effect, 0.8, 1e-9);
  EXPECT_EQ(d9.comparisons, 1);
  EXPECT_EQ(d9.supporting, 0);
}

// A dispatch seal whose table names a candidate that is neither in the file nor in the store could
// never be loaded: the import is refused whole, naming the row and the entry.
TEST(ImportDecisions, ADispatchTableNamingAMissingCandidateIsRefused) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("k.db"), &err)) << err;
  json doc = json::parse(Seed());
  auto with_dispatch = [&](const json& dispatch) {
    json d = doc;
    d["seals"][0]["metadata_json"] = json{{"dispatch", dispatch}}.dump();
    return d.dump();
  };
  json table = {{"kernels", json::array({{{"candidate", "c"}, {"params", {{"BM", 128}}}},
                                          {{"candidate", "gone"}, {"params", json::object()}}})},
                {"table", json::array({{{"config", "8192^3"}, {"kernel", 1}}})}};
  EXPECT_FALSE(ImportStore(store, with_dispatch(table), "d.json", nullptr, &err));
  EXPECT_NE(err.find("d.json: seals[0].metadata_json: dispatch.kernels[1].candidate: names candidate \"gone\", "
                     "which is neither in the file nor in the store"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("nothing was imported"), std::string::npos) << err;
  std::vector<SealRecord> seals;
  ASSERT_TRUE(store.ListSeals("gemm_bf16", "sm90", &seals, &err)) << err;
  EXPECT_TRUE(seals.empty());

  // A table of the wrong shape is refused the same way.
  json bad_index = table;
  bad_index["kernels"][1] = {{"reference", "reference (cublas.gemm_bf16)"}};
  bad_index["table"][0]["kernel"] = 2;
  EXPECT_FALSE(ImportStore(store, with_dispatch(bad_index), "d.json", nullptr, &err));
  EXPECT_NE(err.find("seals[0].metadata_json: dispatch.table[0]: needs"), std::string::npos) << err;
  EXPECT_FALSE(ImportStore(store, with_dispatch(json::array()), "d.json", nullptr, &err));
  EXPECT_NE(err.find("seals[0].metadata_json: dispatch: expected an object"), std::string::npos) << err;

  // With the candidate in the file (or the reference in its place) the seal is imported.
  json fixed = table;
  fixed["kernels"][1] = {{"reference", "reference (cublas.gemm_bf16)"}};
  ASSERT_TRUE(ImportStore(store, with_dispatch(fixed), "d.json", nullptr, &err)) << err;
  ASSERT_TRUE(store.ListSeals("gemm_bf16", "sm90", &seals, &err)) << err;
  EXPECT_EQ(seals.size(), 1u);
}

}  // namespace
}  // namespace forgek
