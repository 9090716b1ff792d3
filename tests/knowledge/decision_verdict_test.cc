// A decision's verdict: one spelling each, and a stored spelling that is none of them is an error.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "forgek/core/decision.h"
#include "forgek/knowledge/store.h"
#include "knowledge/sql.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(DecisionVerdict, EachVerdictHasOneSpellingThatParsesBack) {
  for (DecisionVerdict v : {DecisionVerdict::hypothesis, DecisionVerdict::validated, DecisionVerdict::refuted}) {
    DecisionVerdict back = v == DecisionVerdict::refuted ? DecisionVerdict::hypothesis : DecisionVerdict::refuted;
    ASSERT_TRUE(ParseDecisionVerdict(DecisionVerdictName(v), &back)) << DecisionVerdictName(v);
    EXPECT_EQ(back, v);
  }
  DecisionVerdict untouched = DecisionVerdict::validated;
  for (const char* wrong : {"", "Validated", "refute", "verified"}) {
    EXPECT_FALSE(ParseDecisionVerdict(wrong, &untouched)) << wrong;
    EXPECT_EQ(untouched, DecisionVerdict::validated);
  }
}

TEST(DecisionVerdict, AStoredVerdictOfNoKnownSpellingIsAnErrorNamingTheDecision) {
  TempDir dir;
  const std::string path = dir.file("store.db");
  std::string err;
  {
    Store store;
    ASSERT_TRUE(store.Open(path, &err)) << err;
    ASSERT_TRUE(sql::Exec(store.handle(),
                          "INSERT INTO decisions (id, arch, category, regime, mechanism, setting, verdict, effect, "
                          "confidence, supporting, contradicting, text, created_at, updated_at) VALUES ('dgood', "
                          "'sm90', 'softmax', 'large', 'vector_16B', 'VEC=4', 'refuted', 0.8, 0.5, 0, 2, 't', "
                          "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                          &err))
        << err;
    std::vector<DecisionRecord> ds;
    ASSERT_TRUE(store.ListDecisions({}, &ds, &err)) << err;
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_EQ(ds[0].verdict, DecisionVerdict::refuted);
    DecisionQuery validated_only;
    validated_only.verdict = DecisionVerdict::validated;
    ASSERT_TRUE(store.ListDecisions(validated_only, &ds, &err)) << err;
    EXPECT_TRUE(ds.empty()) << "the verdict filter";
    ASSERT_TRUE(sql::Exec(store.handle(), "UPDATE decisions SET verdict = 'certain' WHERE id = 'dgood'", &err)) << err;
    EXPECT_FALSE(store.ListDecisions({}, &ds, &err));
    EXPECT_EQ(err, "decision dgood: unknown verdict 'certain' (hypothesis, validated or refuted)");
    DecisionRecord d;
    bool found = true;
    EXPECT_FALSE(store.GetDecision("dgood", &d, nullptr, &found, &err));
    EXPECT_NE(err.find("unknown verdict 'certain'"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace forgek
