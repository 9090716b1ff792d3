// Choosing a run's incumbent when the newest seal cannot be rebuilt: it is passed over, with a note.
#include <gtest/gtest.h>

#include "forgek/knowledge/store.h"
#include "forgek/knowledge/store_io.h"
#include "loop_fixture.h"
#include "forgek/seal/incumbent.h"

namespace forgek {
namespace {

SealRecord ToySeal(const std::string& id, const std::string& candidate, const std::string& created_at) {
  SealRecord s;
  s.id = id;
  s.operator_name = "toy";
  s.arch = "sm90";
  s.candidate_hash = candidate;
  s.params_json = R"({"TILE": 2, "UNROLL": 1})";
  s.created_at = created_at;
  return s;
}

// A seal naming a candidate the store lacks (an import from elsewhere) used to fail every run of
// the operator; it is skipped with a note naming the command that removes it.
TEST(Incumbent, ASealWhoseCandidateIsMissingIsSkippedForTheNextOne) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));

  ASSERT_TRUE(store.AddSeal(ToySeal("orphan", "nohash", "2026-02-01T00:00:00Z"), &err)) << err;
  Incumbent inc;
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_TRUE(inc.seal_id.empty()) << "the expert reference serves";
  ASSERT_EQ(inc.skipped_seals.size(), 1u);
  EXPECT_NE(inc.skipped_seals[0].find("seal orphan skipped: it names candidate nohash which the store does not hold"),
            std::string::npos)
      << inc.skipped_seals[0];
  EXPECT_NE(inc.skipped_seals[0].find("forgek knowledge forget --seal orphan"), std::string::npos);

  // An older seal whose candidate is held serves instead.
  CandidateRecord c{"tiledhash", "toy", kFastFamily, "{}", "tiled", {}, ""};
  ASSERT_TRUE(store.PutCandidate(c, nullptr, &err)) << err;
  ASSERT_TRUE(store.AddSeal(ToySeal("older", "tiledhash", "2026-01-01T00:00:00Z"), &err)) << err;
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_EQ(inc.seal_id, "older");
  EXPECT_EQ(inc.skipped_seals.size(), 1u);

  // Forgetting the orphan seal leaves nothing to skip.
  std::map<std::string, int> removed;
  ForgetQuery q;
  q.seal = "orph";
  ASSERT_TRUE(Forget(store, q, &removed, &err)) << err;
  EXPECT_EQ(removed["seals"], 1);
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_EQ(inc.seal_id, "older");
  EXPECT_TRUE(inc.skipped_seals.empty());
}

// A dispatch seal whose table names a kernel the store lacks (an import written before imports
// checked the table) used to fail every run in PickIncumbent; it is passed over like a seal whose own
// candidate is missing, and so is one whose table cannot be read.
TEST(Incumbent, ADispatchSealWhoseKernelIsMissingIsSkippedForTheNextOne) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  CandidateRecord c{"tiledhash", "toy", kFastFamily, "{}", "tiled", {}, ""};
  ASSERT_TRUE(store.PutCandidate(c, nullptr, &err)) << err;
  ASSERT_TRUE(store.AddSeal(ToySeal("older", "tiledhash", "2026-01-01T00:00:00Z"), &err)) << err;
  SealRecord dispatch = ToySeal("dispatch", "tiledhash", "2026-02-01T00:00:00Z");
  dispatch.metadata_json = R"({"dispatch": {"kernels": [{"candidate": "tiledhash", "params": {"TILE": 8, "UNROLL": 2}},
                                                        {"candidate": "gonehash", "params": {"TILE": 1, "UNROLL": 1}}],
                                            "table": [{"config": "small", "kernel": 0}, {"config": "large", "kernel": 1}]}})";
  ASSERT_TRUE(store.AddSeal(dispatch, &err)) << err;
  Incumbent inc;
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_EQ(inc.seal_id, "older") << "the next seal serves";
  EXPECT_TRUE(inc.per_config.empty());
  ASSERT_EQ(inc.skipped_seals.size(), 1u);
  EXPECT_NE(inc.skipped_seals[0].find("seal dispatch skipped: its dispatch table (kernels[1]) names candidate gonehash "
                                      "which the store does not hold"),
            std::string::npos)
      << inc.skipped_seals[0];
  EXPECT_NE(inc.skipped_seals[0].find("forgek knowledge forget --seal dispatch"), std::string::npos);

  // A table that cannot be read is passed over too; with no other seal the expert reference serves.
  std::map<std::string, int> removed;
  ForgetQuery q;
  q.seal = "older";
  ASSERT_TRUE(Forget(store, q, &removed, &err)) << err;
  SealRecord unreadable = ToySeal("unreadable", "tiledhash", "2026-03-01T00:00:00Z");
  unreadable.metadata_json = R"({"dispatch": {"kernels": [{"reference": "r"}], "table": [{"config": "small", "kernel": 7}]}})";
  ASSERT_TRUE(store.AddSeal(unreadable, &err)) << err;
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_TRUE(inc.seal_id.empty()) << inc.seal_id;
  ASSERT_EQ(inc.skipped_seals.size(), 2u);
  EXPECT_NE(inc.skipped_seals[0].find("seal unreadable skipped: its dispatch table cannot be read (seal unreadable "
                                      "metadata dispatch.table[0]: needs"),
            std::string::npos)
      << inc.skipped_seals[0];
  EXPECT_NE(inc.skipped_seals[1].find("seal dispatch skipped"), std::string::npos) << inc.skipped_seals[1];

  // Once the store holds the missing kernel, the dispatch seal serves, per config.
  q.seal = "unreadable";
  ASSERT_TRUE(Forget(store, q, &removed, &err)) << err;
  CandidateRecord gone{"gonehash", "toy", kFastFamily, "{}", "tiled", {}, ""};
  ASSERT_TRUE(store.PutCandidate(gone, nullptr, &err)) << err;
  ASSERT_TRUE(PickIncumbent(fx.op, "sm90", &store, compiler, &inc, &err)) << err;
  EXPECT_EQ(inc.seal_id, "dispatch");
  EXPECT_TRUE(inc.skipped_seals.empty());
  ASSERT_EQ(inc.per_config.size(), 2u);
  EXPECT_EQ(inc.per_config.at("large").kernel.params.at("TILE"), 1);
}

}  // namespace
}  // namespace forgek
